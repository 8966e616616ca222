package plan

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/fabctl/fabctl/internal/safefile"
)

// Environment variables that configure plan signing. A pipeline's plan
// job holds the signing key, its apply job the verification key.
const (
	// KeyEnv holds a shared secret: plan -out signs with HMAC-SHA256
	// under it, and apply and show verify with it.
	KeyEnv = "FABCTL_PLAN_KEY"
	// SigningKeyEnv names an ed25519 private key file plan -out signs
	// with (as --signing-key does).
	SigningKeyEnv = "FABCTL_PLAN_SIGNING_KEY"
	// VerifyKeyEnv names an ed25519 public key file apply and show verify
	// with (as --verify-key does).
	VerifyKeyEnv = "FABCTL_PLAN_VERIFY_KEY"
)

// Keys are the keys that sign saved plans (plan -out) and verify them
// (apply, show). The zero value signs nothing and verifies nothing.
type Keys struct {
	// HMAC is the shared secret of FABCTL_PLAN_KEY: it signs and verifies.
	HMAC []byte
	// Signing is the ed25519 private key plan -out signs with.
	Signing ed25519.PrivateKey
	// Verify are the ed25519 public keys a plan may be signed with.
	Verify []ed25519.PublicKey
}

// Verifying reports whether a verification key is configured: then only
// a plan signed with one of them is accepted.
func (k Keys) Verifying() bool { return len(k.HMAC) > 0 || len(k.Verify) > 0 }

// LoadKeys reads the signing configuration: FABCTL_PLAN_KEY through
// getenv, and the ed25519 key files named by the flags or, when a flag is
// empty, by FABCTL_PLAN_SIGNING_KEY and FABCTL_PLAN_VERIFY_KEY. Key files
// are read with safefile (regular files of at most 64 KiB).
func LoadKeys(getenv func(string) string, signingFile, verifyFile string) (Keys, error) {
	var k Keys
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if v := getenv(KeyEnv); v != "" {
		k.HMAC = []byte(v)
	}
	if signingFile == "" {
		signingFile = getenv(SigningKeyEnv)
	}
	if verifyFile == "" {
		verifyFile = getenv(VerifyKeyEnv)
	}
	if signingFile != "" {
		if len(k.HMAC) > 0 {
			return Keys{}, fmt.Errorf("both %s and an ed25519 signing key (%s) are set: a plan carries one signature; unset one", KeyEnv, signingFile)
		}
		b, err := safefile.ReadFile(signingFile, safefile.PlanKey)
		if err != nil {
			return Keys{}, err
		}
		priv, err := ParseSigningKey(b)
		if err != nil {
			return Keys{}, fmt.Errorf("signing key %s: %v", signingFile, err)
		}
		k.Signing = priv
	}
	if verifyFile != "" {
		b, err := safefile.ReadFile(verifyFile, safefile.PlanKey)
		if err != nil {
			return Keys{}, err
		}
		pubs, err := ParseVerifyKeys(b)
		if err != nil {
			return Keys{}, fmt.Errorf("verification key %s: %v", verifyFile, err)
		}
		k.Verify = pubs
	}
	return k, nil
}

// ParseSigningKey reads an ed25519 private key: PKCS#8 PEM ("PRIVATE
// KEY", openssl genpkey -algorithm ed25519) or an unencrypted OpenSSH key
// (ssh-keygen -t ed25519 -N ""). Errors never quote the key.
func ParseSigningKey(b []byte) (ed25519.PrivateKey, error) {
	raw, err := ssh.ParseRawPrivateKey(b)
	if err != nil {
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, errors.New("the key is encrypted: give an unencrypted ed25519 key (the pipeline's secret store protects it)")
		}
		return nil, errors.New("not an ed25519 private key in PKCS#8 PEM or OpenSSH format")
	}
	switch key := raw.(type) {
	case ed25519.PrivateKey:
		return key, nil
	case *ed25519.PrivateKey:
		return *key, nil
	}
	return nil, fmt.Errorf("a %T, not an ed25519 key", raw)
}

// ParseVerifyKeys reads ed25519 public keys: PKIX PEM blocks ("PUBLIC
// KEY", openssl pkey -pubout) or OpenSSH authorized_keys lines
// ("ssh-ed25519 AAAA..."), one or more; blank lines and # comments are
// skipped.
func ParseVerifyKeys(b []byte) ([]ed25519.PublicKey, error) {
	var out []ed25519.PublicKey
	rest := b
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("a PEM %q block, not a PUBLIC KEY", blk.Type)
		}
		pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM public key: %v", err)
		}
		ep, ok := pub.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("a %T public key, not ed25519", pub)
		}
		out = append(out, ep)
	}
	for _, line := range strings.Split(string(rest), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return nil, errors.New("a line that is neither a PEM public key nor an ssh-ed25519 key")
		}
		cp, ok := pk.(ssh.CryptoPublicKey)
		if !ok {
			return nil, fmt.Errorf("a %s key, not ed25519", pk.Type())
		}
		ep, ok := cp.CryptoPublicKey().(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("a %s key, not ed25519", pk.Type())
		}
		out = append(out, ep)
	}
	if len(out) == 0 {
		return nil, errors.New("no ed25519 public key in it")
	}
	return out, nil
}

// KeyID names an ed25519 public key as OpenSSH prints fingerprints:
// "SHA256:" and the unpadded base64 of the key's SHA-256.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// payload is what a signature covers: the whole saved plan with no
// signature and no seal.
func (s *SavedPlan) payload() ([]byte, error) {
	c := *s
	c.Signature = ""
	c.ContentHash = ""
	return json.Marshal(&c)
}

func hmacSig(key, payload []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// edMessage is what an ed25519 signature signs: a domain tag (a key used
// elsewhere cannot be made to sign a plan) and the payload's SHA-256.
func edMessage(payload []byte) []byte {
	sum := sha256.Sum256(payload)
	return []byte("fabctl saved plan v1\n" + hex.EncodeToString(sum[:]))
}

// EncodeSigned seals the plan and signs it with keys' signing key (an
// ed25519 key, else the HMAC key; unsigned with neither).
func (s *SavedPlan) EncodeSigned(keys Keys) ([]byte, error) {
	s.Signature = ""
	s.FormatVersion = FormatVersion
	if keys.Signing != nil || len(keys.HMAC) > 0 {
		payload, err := s.payload()
		if err != nil {
			return nil, err
		}
		if keys.Signing != nil {
			pub := keys.Signing.Public().(ed25519.PublicKey)
			s.Signature = "ed25519:" + KeyID(pub) + ":" + base64.StdEncoding.EncodeToString(ed25519.Sign(keys.Signing, edMessage(payload)))
		} else {
			s.Signature = hmacSig(keys.HMAC, payload)
		}
	}
	return s.Encode()
}

// WriteSigned saves the plan as Write does, signed with keys.
func (s *SavedPlan) WriteSigned(path string, keys Keys) error {
	b, err := s.EncodeSigned(keys)
	if err != nil {
		return err
	}
	return writeFile(path, b)
}

// Signer says who signed the plan: "HMAC-SHA256 (FABCTL_PLAN_KEY)",
// "ed25519 key SHA256:...", or "" when it is unsigned.
func (s *SavedPlan) Signer() string {
	switch {
	case strings.HasPrefix(s.Signature, "hmac-sha256:"):
		return "HMAC-SHA256 (" + KeyEnv + ")"
	case strings.HasPrefix(s.Signature, "ed25519:"):
		rest := strings.TrimPrefix(s.Signature, "ed25519:")
		if i := strings.LastIndex(rest, ":"); i >= 0 {
			rest = rest[:i]
		}
		if len(rest) > 60 {
			rest = rest[:60] + "..."
		}
		return "ed25519 key " + rest
	case s.Signature != "":
		return "an unknown scheme"
	}
	return ""
}

// Verify checks the plan's signature against keys. With a verification
// key configured, the plan must be signed with one of them; with none, a
// signed plan is refused too (it cannot be checked, and its signer
// meant it to be).
func (s *SavedPlan) Verify(name string, keys Keys) error {
	if !keys.Verifying() {
		switch {
		case strings.HasPrefix(s.Signature, "hmac-sha256:"):
			return fmt.Errorf("%s is signed: set %s to the key it was signed with to check it", name, KeyEnv)
		case s.Signature != "":
			return fmt.Errorf("%s is signed by %s: give its public key (--verify-key or %s) to check it", name, s.Signer(), VerifyKeyEnv)
		}
		return nil
	}
	if s.Signature == "" {
		return fmt.Errorf("%s has no signature, and a plan verification key is configured (%s): only plans signed with it are applied; re-run fabctl plan -out with the signing key; nothing was applied", name, keys.describe())
	}
	payload, err := s.payload()
	if err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(s.Signature, "hmac-sha256:"):
		if len(keys.HMAC) > 0 && hmac.Equal([]byte(hmacSig(keys.HMAC, payload)), []byte(s.Signature)) {
			return nil
		}
	case strings.HasPrefix(s.Signature, "ed25519:"):
		rest := strings.TrimPrefix(s.Signature, "ed25519:")
		i := strings.LastIndex(rest, ":")
		if i < 0 {
			break
		}
		sig, err := base64.StdEncoding.DecodeString(rest[i+1:])
		if err != nil {
			break
		}
		for _, pub := range keys.Verify {
			if ed25519.Verify(pub, edMessage(payload), sig) {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: the signature (%s) does not verify with %s: the plan was edited after it was signed, or signed with another key; nothing was applied; re-run fabctl plan -out", name, s.Signer(), keys.describe())
}

// describe names the verification keys configured.
func (k Keys) describe() string {
	var parts []string
	if len(k.HMAC) > 0 {
		parts = append(parts, KeyEnv)
	}
	for _, p := range k.Verify {
		parts = append(parts, "ed25519 key "+KeyID(p))
	}
	return strings.Join(parts, ", ")
}

// DecodeKey parses a saved plan and checks, in this order, its seal
// (Decode), its signature under keys (Verify) and what binds it to its
// embedded spec (Check). Nothing in a plan that fails is used.
func DecodeKey(b []byte, name string, keys Keys) (*SavedPlan, error) {
	s, err := Decode(b, name)
	if err != nil {
		return nil, err
	}
	if err := s.Verify(name, keys); err != nil {
		return nil, err
	}
	if err := s.Check(name); err != nil {
		return nil, err
	}
	return s, nil
}
