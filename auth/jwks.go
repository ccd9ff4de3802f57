package auth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
)

// publicKey is one verification key: its key id and algorithm ("" when the source names none).
type publicKey struct {
	kid string
	alg string
	key crypto.PublicKey
}

// keySet is an immutable list of verification keys.
type keySet struct {
	keys []publicKey
}

// minRSABits is the smallest RSA modulus accepted (RFC 7518 §3.3 requires 2048).
const minRSABits = 2048

// parseKeys parses verification keys: a JWKS document (RFC 7517 §5) when data starts with "{",
// else PEM blocks of PUBLIC KEY or CERTIFICATE. Keys whose "use" is not "sig" and key types edge
// does not verify with are skipped; a document that yields no key is an error.
func parseKeys(data []byte) (*keySet, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		return parseJWKS(data)
	}
	set := &keySet{}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		var pub crypto.PublicKey
		switch b.Type {
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("public key: %w", err)
			}
			pub = k
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("certificate: %w", err)
			}
			pub = c.PublicKey
		default:
			continue
		}
		if err := checkKey(pub); err != nil {
			return nil, err
		}
		set.keys = append(set.keys, publicKey{key: pub})
	}
	if len(set.keys) == 0 {
		return nil, errors.New("no public key found")
	}
	return set, nil
}

type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

func parseJWKS(data []byte) (*keySet, error) {
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	set := &keySet{}
	for _, k := range doc.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pub, err := k.publicKey()
		if err != nil {
			return nil, fmt.Errorf("jwks: key %q: %w", k.Kid, err)
		}
		if pub == nil {
			continue // a key type edge does not verify with (oct, ...)
		}
		set.keys = append(set.keys, publicKey{kid: k.Kid, alg: k.Alg, key: pub})
	}
	if len(set.keys) == 0 {
		return nil, errors.New("jwks: no usable signing key")
	}
	return set, nil
}

func (k *jwk) publicKey() (crypto.PublicKey, error) {
	b64 := base64.RawURLEncoding
	switch k.Kty {
	case "RSA":
		n, err1 := b64.DecodeString(k.N)
		e, err2 := b64.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return nil, errors.New("malformed RSA key")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		return pub, checkKey(pub)
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return nil, fmt.Errorf("unsupported curve %q", k.Crv)
		}
		size := (curve.Params().BitSize + 7) / 8
		x, err1 := b64.DecodeString(k.X)
		y, err2 := b64.DecodeString(k.Y)
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return nil, errors.New("malformed EC key")
		}
		point := append(append([]byte{4}, x...), y...)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return nil, errors.New("EC point not on the curve")
		}
		return pub, nil
	case "OKP":
		if k.Crv != "Ed25519" {
			return nil, fmt.Errorf("unsupported curve %q", k.Crv)
		}
		x, err := b64.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, errors.New("malformed Ed25519 key")
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, nil
}

func checkKey(pub crypto.PublicKey) error {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return fmt.Errorf("RSA key of %d bits is below %d", k.N.BitLen(), minRSABits)
		}
		if k.E < 3 || k.E%2 == 0 {
			return errors.New("bad RSA exponent")
		}
	case *ecdsa.PublicKey, ed25519.PublicKey:
	default:
		return fmt.Errorf("unsupported key type %T", pub)
	}
	return nil
}

// keyFits reports whether key may verify a signature of alg: RSA keys for RS* and PS*, ECDSA keys
// on the algorithm's own curve for ES*, Ed25519 keys for EdDSA. This is what keeps a public key
// from ever being used as an HMAC secret or with another family's algorithm.
func keyFits(alg string, key crypto.PublicKey) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch alg {
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
			return true
		}
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return k.Curve == elliptic.P256()
		case "ES384":
			return k.Curve == elliptic.P384()
		case "ES512":
			return k.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}
