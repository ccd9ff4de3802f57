// Package trust verifies that data files (WAF rules, the fingerprint database, block and allow lists)
// come from a trusted publisher, with detached post-quantum signatures: ML-DSA-65 (FIPS 204, from
// github.com/cloudflare/circl).
//
// A fleet signs each data file once (`edge keys sign FILE` writes FILE.sig) and every edge that lists
// the publisher's public key in `[data] trusted_keys` refuses a file without a valid signature: at
// start the configuration is invalid; on reload the old data keeps serving and the error is reported.
//
// What is signed is a domain-separation context ("edge data file v1"), the file's base name and its
// bytes, so a valid signature cannot be moved to another file. It does not prevent replaying an older
// signed version of the same file (rollback); fleets that care rotate keys or put a version in the
// file.
//
// File formats (PEM, so they survive copy and paste):
//   - public key:  "EDGE MLDSA65 PUBLIC KEY", the 1952-byte ML-DSA-65 public key;
//   - private key: "EDGE MLDSA65 PRIVATE KEY", the 32-byte seed (mode 0600);
//   - signature:   "EDGE MLDSA65 SIGNATURE" with a Key-Id header (the first 8 bytes of the SHA-256 of
//     the public key, hex), the 3309-byte signature.
//
// The package is a leaf: the root reads each data file through a Verifier and hands the verified
// bytes to the capability package that parses them, so what was verified is exactly what is parsed.
package trust
