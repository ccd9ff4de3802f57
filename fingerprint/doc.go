// Package fingerprint computes JA3 and JA4 TLS client fingerprints.
package fingerprint
