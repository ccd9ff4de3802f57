package trust

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"
)

const (
	pemPublic    = "EDGE MLDSA65 PUBLIC KEY"
	pemPrivate   = "EDGE MLDSA65 PRIVATE KEY"
	pemSignature = "EDGE MLDSA65 SIGNATURE"
	// context is the ML-DSA context string: signatures made for edge data files verify nowhere else.
	context = "edge data file v1"
	// SigSuffix is appended to a data file's path to find its detached signature.
	SigSuffix = ".sig"
	// maxFileBytes bounds every key, signature and data file read here.
	maxFileBytes = 64 << 20
)

// GenerateKey returns a new key pair as PEM: the public key to distribute in trusted_keys and the
// private key (a seed) to keep secret.
func GenerateKey() (pubPEM, privPEM []byte, err error) {
	var seed [mldsa65.SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, nil, err
	}
	pk, _ := mldsa65.NewKeyFromSeed(&seed)
	pub, err := pk.MarshalBinary()
	if err != nil {
		return nil, nil, err
	}
	pubPEM = pem.EncodeToMemory(&pem.Block{Type: pemPublic, Headers: map[string]string{"Key-Id": keyID(pub)}, Bytes: pub})
	privPEM = pem.EncodeToMemory(&pem.Block{Type: pemPrivate, Bytes: seed[:]})
	return pubPEM, privPEM, nil
}

func keyID(pub []byte) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// message is what a signature covers: the file's base name and its bytes.
func message(name string, data []byte) []byte {
	base := filepath.Base(name)
	msg := make([]byte, 0, len(base)+1+len(data))
	msg = append(msg, base...)
	msg = append(msg, 0)
	return append(msg, data...)
}

// Sign signs data, the content of the file called name, with a PEM private key and returns the
// signature file's content.
func Sign(privPEM []byte, name string, data []byte) ([]byte, error) {
	b, _ := pem.Decode(privPEM)
	if b == nil || b.Type != pemPrivate || len(b.Bytes) != mldsa65.SeedSize {
		return nil, errors.New("trust: not an edge ML-DSA-65 private key")
	}
	var seed [mldsa65.SeedSize]byte
	copy(seed[:], b.Bytes)
	pk, sk := mldsa65.NewKeyFromSeed(&seed)
	pub, err := pk.MarshalBinary()
	if err != nil {
		return nil, err
	}
	sig := make([]byte, mldsa65.SignatureSize)
	if err := mldsa65.SignTo(sk, message(name, data), []byte(context), true, sig); err != nil {
		return nil, fmt.Errorf("trust: sign: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemSignature, Headers: map[string]string{"Key-Id": keyID(pub)}, Bytes: sig}), nil
}

// Verifier holds the trusted public keys. A nil *Verifier trusts every file (no keys configured).
type Verifier struct {
	keys map[string]*mldsa65.PublicKey // by key id
}

// ParsePublicKey parses a PEM public key.
func ParsePublicKey(pubPEM []byte) (id string, pk *mldsa65.PublicKey, err error) {
	b, _ := pem.Decode(pubPEM)
	if b == nil || b.Type != pemPublic {
		return "", nil, errors.New("trust: not an edge ML-DSA-65 public key")
	}
	pk = new(mldsa65.PublicKey)
	if err := pk.UnmarshalBinary(b.Bytes); err != nil {
		return "", nil, fmt.Errorf("trust: bad public key: %w", err)
	}
	return keyID(b.Bytes), pk, nil
}

// LoadVerifier reads the public key files. It returns nil (trust everything) when paths is empty.
func LoadVerifier(paths []string) (*Verifier, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	v := &Verifier{keys: map[string]*mldsa65.PublicKey{}}
	var errs []error
	for _, p := range paths {
		data, err := readBounded(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		id, pk, err := ParsePublicKey(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
			continue
		}
		v.keys[id] = pk
	}
	return v, errors.Join(errs...)
}

// Verify checks sig (a signature file's content) over data, the content of the file called name.
func (v *Verifier) Verify(name string, data, sig []byte) error {
	if v == nil {
		return nil
	}
	b, _ := pem.Decode(sig)
	if b == nil || b.Type != pemSignature {
		return fmt.Errorf("trust: %s: signature file is not an edge ML-DSA-65 signature", name)
	}
	pk, ok := v.keys[b.Headers["Key-Id"]]
	if !ok {
		return fmt.Errorf("trust: %s: signed by key %q, which is not in trusted_keys", name, b.Headers["Key-Id"])
	}
	if !mldsa65.Verify(pk, message(name, data), []byte(context), b.Bytes) {
		return fmt.Errorf("trust: %s: bad signature (the file changed after signing, or the signature is for another file)", name)
	}
	return nil
}

// ReadFile reads path and, when keys are configured, its detached signature path+".sig", and returns
// the bytes only if the signature verifies. With a nil Verifier it is a bounded os.ReadFile.
func (v *Verifier) ReadFile(path string) ([]byte, error) {
	data, err := readBounded(path)
	if err != nil || v == nil {
		return data, err
	}
	sig, err := readBounded(path + SigSuffix)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("trust: %s: unsigned (no %s%s) and trusted_keys is set", path, filepath.Base(path), SigSuffix)
		}
		return nil, err
	}
	if err := v.Verify(path, data, sig); err != nil {
		return nil, err
	}
	return data, nil
}

func readBounded(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxFileBytes {
		return nil, fmt.Errorf("trust: %s: larger than %d bytes", path, maxFileBytes)
	}
	return os.ReadFile(path)
}
