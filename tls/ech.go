package tls

import (
	"crypto/hpke"
	stdtls "crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"

	"golang.org/x/crypto/cryptobyte"
)

// ECH key file format. A key file is PEM with exactly two blocks:
//
//   - "ECH PRIVATE KEY": the HPKE private key serialized as RFC 9180
//     SerializePrivateKey (for the hybrid KEMs, the seed defined by
//     draft-ietf-hpke-pq);
//   - "ECHCONFIG": an ECHConfigList (draft-ietf-tls-esni §4) holding the
//     one ECHConfig that matches the private key — the bytes to publish,
//     base64-encoded, in the "ech" parameter of a DNS HTTPS record.
const (
	pemECHPrivateKey = "ECH PRIVATE KEY"
	pemECHConfig     = "ECHCONFIG"
)

// HPKE identifiers (RFC 9180 §7 and draft-ietf-hpke-pq).
const (
	// KEMMLKEM768X25519 is the hybrid post-quantum HPKE KEM
	// MLKEM768-X25519, the default for GenerateECHKey.
	KEMMLKEM768X25519 uint16 = 0x647a
	// KEMMLKEM768P256 is the hybrid HPKE KEM MLKEM768-P256.
	KEMMLKEM768P256 uint16 = 0x0050
	// KEMMLKEM1024P384 is the hybrid HPKE KEM MLKEM1024-P384.
	KEMMLKEM1024P384 uint16 = 0x0051
	// KEMX25519 is the classical DHKEM(X25519, HKDF-SHA256), for clients
	// that do not implement the hybrid HPKE KEMs yet.
	KEMX25519 uint16 = 0x0020

	echVersion       = 0xfe0d // draft-ietf-tls-esni-18 onwards
	echMaxNameLength = 64     // padding target for the inner server name
)

// echSuites are the HPKE symmetric suites offered in every generated
// ECHConfig: HKDF-SHA256 with AES-128-GCM, ChaCha20-Poly1305 and AES-256-GCM.
var echSuites = [][2]uint16{{0x0001, 0x0001}, {0x0001, 0x0003}, {0x0001, 0x0002}}

// GenerateECHKey generates an Encrypted Client Hello key with the hybrid
// post-quantum HPKE KEM MLKEM768-X25519 and returns the key file (see the
// format above). publicName is the client-facing server name sent in the
// outer ClientHello; the edge must hold a certificate for it so that clients
// can authenticate an ECH rejection.
//
// crypto/tls in Go 1.26 accepts any KEM crypto/hpke implements for server
// and client ECH (it calls hpke.NewKEM with the config's kem_id), although
// its documentation lists only the four DHKEMs. The hybrid KEMs are
// therefore usable end to end between Go peers; browsers that implement only
// DHKEM(X25519) need a key from GenerateECHKeyKEM(..., KEMX25519).
func GenerateECHKey(configID uint8, publicName string) (keyFile []byte, err error) {
	return GenerateECHKeyKEM(configID, publicName, KEMMLKEM768X25519)
}

// GenerateECHKeyKEM is GenerateECHKey with an explicit HPKE KEM identifier.
func GenerateECHKeyKEM(configID uint8, publicName string, kemID uint16) ([]byte, error) {
	if !validPublicName(publicName) {
		return nil, fmt.Errorf("tls: ech public name %q is not a valid DNS name", publicName)
	}
	kem, err := hpke.NewKEM(kemID)
	if err != nil {
		return nil, fmt.Errorf("tls: ech kem 0x%04x: %v", kemID, err)
	}
	priv, err := kem.GenerateKey()
	if err != nil {
		return nil, fmt.Errorf("tls: ech key generation: %v", err)
	}
	privBytes, err := priv.Bytes()
	if err != nil {
		return nil, fmt.Errorf("tls: ech key serialization: %v", err)
	}
	cfg := marshalECHConfig(configID, kemID, priv.PublicKey().Bytes(), publicName)
	var b cryptobyte.Builder
	b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes(cfg) })
	list, err := b.Bytes()
	if err != nil {
		return nil, fmt.Errorf("tls: ech config: %v", err)
	}
	out := pem.EncodeToMemory(&pem.Block{Type: pemECHPrivateKey, Bytes: privBytes})
	return append(out, pem.EncodeToMemory(&pem.Block{Type: pemECHConfig, Bytes: list})...), nil
}

// marshalECHConfig encodes one ECHConfig (draft-ietf-tls-esni §4).
func marshalECHConfig(configID uint8, kemID uint16, pub []byte, publicName string) []byte {
	var b cryptobyte.Builder
	b.AddUint16(echVersion)
	b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) {
		b.AddUint8(configID)
		b.AddUint16(kemID)
		b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes(pub) })
		b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) {
			for _, s := range echSuites {
				b.AddUint16(s[0])
				b.AddUint16(s[1])
			}
		})
		b.AddUint8(echMaxNameLength)
		b.AddUint8LengthPrefixed(func(b *cryptobyte.Builder) { b.AddBytes([]byte(publicName)) })
		b.AddUint16(0) // no extensions
	})
	return b.BytesOrPanic()
}

// ECHConfigList returns the ECHConfigList stored in a key file, after
// checking that the file parses and that its private key matches the
// config's public key.
func ECHConfigList(keyFile []byte) ([]byte, error) {
	k, err := parseECHKeyFile(keyFile)
	if err != nil {
		return nil, err
	}
	return k.list, nil
}

// MergeECHConfigLists returns one ECHConfigList holding the configs of
// several key files, in the order given. Clients use the first config whose
// KEM and cipher suites they implement, so publishing a hybrid key first and
// a DHKEM(X25519) key second gives post-quantum ECH to clients that can do
// it and classical ECH to the others (load both key files in
// ech.key_files).
func MergeECHConfigLists(keyFiles ...[]byte) ([]byte, error) {
	var b cryptobyte.Builder
	var errs []error
	b.AddUint16LengthPrefixed(func(b *cryptobyte.Builder) {
		for i, f := range keyFiles {
			k, err := parseECHKeyFile(f)
			if err != nil {
				errs = append(errs, fmt.Errorf("key file %d: %w", i, err))
				continue
			}
			b.AddBytes(k.key.Config)
		}
	})
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(keyFiles) == 0 {
		return nil, errors.New("tls: no ech key file")
	}
	list, err := b.Bytes()
	if err != nil {
		return nil, fmt.Errorf("tls: ech config list: %v", err)
	}
	return list, nil
}

// echKey is a parsed key file.
type echKey struct {
	configID uint8
	kemID    uint16
	list     []byte // ECHConfigList with one config
	key      stdtls.EncryptedClientHelloKey
}

// parseECHKeyFile parses and cross-checks a key file.
func parseECHKeyFile(data []byte) (*echKey, error) {
	var privBytes, list []byte
	rest := data
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		switch blk.Type {
		case pemECHPrivateKey:
			if privBytes != nil {
				return nil, errors.New("tls: ech key file: more than one " + pemECHPrivateKey + " block")
			}
			privBytes = blk.Bytes
		case pemECHConfig:
			if list != nil {
				return nil, errors.New("tls: ech key file: more than one " + pemECHConfig + " block")
			}
			list = blk.Bytes
		default:
			return nil, fmt.Errorf("tls: ech key file: unexpected PEM block %q", blk.Type)
		}
	}
	if privBytes == nil || list == nil {
		return nil, errors.New("tls: ech key file: want one " + pemECHPrivateKey + " and one " + pemECHConfig + " PEM block")
	}
	s := cryptobyte.String(list)
	var configs cryptobyte.String
	if !s.ReadUint16LengthPrefixed(&configs) || !s.Empty() {
		return nil, errors.New("tls: ech key file: malformed ECHConfigList")
	}
	config := []byte(configs)
	var version uint16
	var body cryptobyte.String
	if !configs.ReadUint16(&version) || !configs.ReadUint16LengthPrefixed(&body) || !configs.Empty() {
		return nil, errors.New("tls: ech key file: ECHConfigList must hold exactly one ECHConfig")
	}
	if version != echVersion {
		return nil, fmt.Errorf("tls: ech key file: ECHConfig version 0x%04x, want 0x%04x", version, echVersion)
	}
	var k echKey
	var pub, suites, publicName, exts cryptobyte.String
	var maxName uint8
	if !body.ReadUint8(&k.configID) || !body.ReadUint16(&k.kemID) ||
		!body.ReadUint16LengthPrefixed(&pub) || !body.ReadUint16LengthPrefixed(&suites) ||
		!body.ReadUint8(&maxName) || !body.ReadUint8LengthPrefixed(&publicName) ||
		!body.ReadUint16LengthPrefixed(&exts) || !body.Empty() {
		return nil, errors.New("tls: ech key file: malformed ECHConfig")
	}
	if len(suites) == 0 || len(suites)%4 != 0 {
		return nil, errors.New("tls: ech key file: ECHConfig has no valid cipher suites")
	}
	for !suites.Empty() {
		var kdf, aead uint16
		suites.ReadUint16(&kdf)
		suites.ReadUint16(&aead)
		if _, err := hpke.NewKDF(kdf); err != nil {
			return nil, fmt.Errorf("tls: ech key file: kdf 0x%04x: %v", kdf, err)
		}
		if _, err := hpke.NewAEAD(aead); err != nil {
			return nil, fmt.Errorf("tls: ech key file: aead 0x%04x: %v", aead, err)
		}
	}
	if !validPublicName(string(publicName)) {
		return nil, fmt.Errorf("tls: ech key file: public name %q is not a valid DNS name", publicName)
	}
	kem, err := hpke.NewKEM(k.kemID)
	if err != nil {
		return nil, fmt.Errorf("tls: ech key file: kem 0x%04x: %v", k.kemID, err)
	}
	priv, err := kem.NewPrivateKey(privBytes)
	if err != nil {
		return nil, fmt.Errorf("tls: ech key file: private key: %v", err)
	}
	if string(priv.PublicKey().Bytes()) != string(pub) {
		return nil, errors.New("tls: ech key file: private key does not match the ECHConfig public key")
	}
	k.list = list
	k.key = stdtls.EncryptedClientHelloKey{Config: config, PrivateKey: privBytes, SendAsRetry: true}
	return &k, nil
}

// validPublicName reports whether name is a syntactically valid DNS host
// name (letters, digits, hyphens; labels of 1-63 bytes; at most 253 bytes).
// Clients skip ECHConfigs whose public name is not.
func validPublicName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	label := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '.':
			if label == 0 || name[i-1] == '-' {
				return false
			}
			label = 0
			continue
		case c == '-':
			if label == 0 {
				return false
			}
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		default:
			return false
		}
		label++
		if label > 63 {
			return false
		}
	}
	return label > 0 && name[len(name)-1] != '-'
}
