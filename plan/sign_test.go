package plan

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/fabctl/fabctl/spec"
)

// signable is a small saved plan that passes Check.
func signable() *SavedPlan {
	src := []spec.File{{Name: "fabric/a.fab.hcl", Data: []byte("fabric \"t\" {}\n")}}
	return &SavedPlan{FabctlVersion: "test", SpecPath: "/srv/fabric", SpecDir: "/srv/fabric", Sources: src,
		Plan: &Plan{Fabric: "t", SpecHash: SourceHash(src)}}
}

// Issue 21: plans can be signed with a key from the environment; a plan
// re-sealed by someone without the key is refused.
func TestSavedPlanSigned(t *testing.T) {
	k1, k2 := Keys{HMAC: []byte("k1")}, Keys{HMAC: []byte("k2")}
	sp := signable()
	b, err := sp.EncodeSigned(k1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeKey(b, "p", k1); err != nil {
		t.Fatalf("signed plan with its key: %v", err)
	}
	if _, err := DecodeKey(b, "p", k2); err == nil || !strings.Contains(err.Error(), "signature") {
		t.Errorf("wrong key: %v", err)
	}
	// Edited and re-sealed without the key: refused when a key is set.
	forged, _ := Decode(b, "p")
	forged.Plan.Fabric = "other"
	fb, err := forged.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeKey(fb, "p", k1); err == nil {
		t.Error("an unsigned (re-sealed) plan passed with a key set")
	}
	// A signed plan read without a key is refused: it cannot be checked.
	if _, err := DecodeKey(b, "p", Keys{}); err == nil || !strings.Contains(err.Error(), "FABCTL_PLAN_KEY") {
		t.Errorf("signed plan without a key: %v", err)
	}
}

// Issue 37: plan -out signs with an ed25519 key the pipeline holds
// (PKCS#8 PEM or OpenSSH); apply with the public key (PKIX PEM or an
// ssh-ed25519 line) refuses a plan that is unsigned, signed with another
// key, or edited after signing, and says why.
func TestSavedPlanSignedEd25519(t *testing.T) {
	dir := t.TempDir()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	otherPub, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	privPEM := filepath.Join(dir, "plan.key")
	os.WriteFile(privPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	ob, _ := ssh.MarshalPrivateKey(otherPriv, "")
	privSSH := filepath.Join(dir, "other_ed25519")
	os.WriteFile(privSSH, pem.EncodeToMemory(ob), 0o600)
	pder, _ := x509.MarshalPKIXPublicKey(pub)
	pubPEM := filepath.Join(dir, "plan.pub")
	os.WriteFile(pubPEM, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder}), 0o644)
	sshPub, _ := ssh.NewPublicKey(otherPub)
	pubSSH := filepath.Join(dir, "other_ed25519.pub")
	os.WriteFile(pubSSH, ssh.MarshalAuthorizedKey(sshPub), 0o644)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	signer, err := LoadKeys(env(nil), privPEM, "")
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := LoadKeys(env(map[string]string{VerifyKeyEnv: pubPEM}), "", "")
	if err != nil || len(verifier.Verify) != 1 {
		t.Fatalf("verification key from the environment: %v", err)
	}
	otherSigner, err := LoadKeys(env(map[string]string{SigningKeyEnv: privSSH}), "", "")
	if err != nil {
		t.Fatal(err)
	}
	otherVerifier, err := LoadKeys(env(nil), "", pubSSH)
	if err != nil {
		t.Fatal(err)
	}
	b, err := signable().EncodeSigned(signer)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := DecodeKey(b, "p", verifier)
	if err != nil {
		t.Fatalf("signed plan with its public key: %v", err)
	}
	if got := sp.Signer(); got != "ed25519 key "+KeyID(pub) {
		t.Errorf("Signer() = %q", got)
	}
	if _, err := DecodeKey(b, "p", otherVerifier); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("another key's public key: %v", err)
	}
	ob2, _ := signable().EncodeSigned(otherSigner)
	if _, err := DecodeKey(ob2, "p", otherVerifier); err != nil {
		t.Errorf("OpenSSH key pair: %v", err)
	}
	if _, err := DecodeKey(ob2, "p", verifier); err == nil {
		t.Error("a plan signed with another key passed")
	}
	unsigned, _ := signable().Encode()
	if _, err := DecodeKey(unsigned, "p", verifier); err == nil || !strings.Contains(err.Error(), "no signature") {
		t.Errorf("unsigned plan with a verification key: %v", err)
	}
	// Edited after signing and sealed again: the signature no longer
	// covers it.
	forged, _ := Decode(b, "p")
	forged.StateDir = "/tmp/elsewhere"
	fb, _ := forged.Encode()
	if _, err := DecodeKey(fb, "p", verifier); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("edited signed plan: %v", err)
	}
	// Without a verification key, a signed plan is refused with the hint.
	if _, err := DecodeKey(b, "p", Keys{}); err == nil || !strings.Contains(err.Error(), VerifyKeyEnv) {
		t.Errorf("ed25519-signed plan without a key: %v", err)
	}
	// Key files that are not keys; both signing kinds at once.
	if _, err := LoadKeys(env(nil), pubPEM, ""); err == nil || strings.Contains(err.Error(), "BEGIN") {
		t.Errorf("a public key as signing key: %v", err)
	}
	if _, err := LoadKeys(env(nil), "", privPEM); err == nil || strings.Contains(err.Error(), "BEGIN") {
		t.Errorf("a private key as verification key: %v", err)
	}
	if _, err := LoadKeys(env(map[string]string{KeyEnv: "k"}), privPEM, ""); err == nil {
		t.Error("HMAC and ed25519 signing keys at once")
	}
}

// Issue 37: a saved plan is bound to its embedded sources: sources that
// do not hash to its spec_hash, relative or unclean directories,
// duplicate file names, a repeated device are refused by Check.
func TestSavedPlanCheck(t *testing.T) {
	if err := signable().Check("p"); err != nil {
		t.Fatalf("a consistent plan: %v", err)
	}
	for name, edit := range map[string]func(*SavedPlan){
		"hash":         func(s *SavedPlan) { s.Sources[0].Data = []byte("fabric \"evil\" {}\n") },
		"no sources":   func(s *SavedPlan) { s.Sources = nil },
		"relative dir": func(s *SavedPlan) { s.SpecDir = "fabric" },
		"unclean dir":  func(s *SavedPlan) { s.SpecDir = "/srv/x/../fabric" },
		"state dir":    func(s *SavedPlan) { s.StateDir = "state" },
		"duplicate": func(s *SavedPlan) {
			s.Sources = append(s.Sources, spec.File{Name: "b/a.fab.hcl"})
			s.Plan.SpecHash = SourceHash(s.Sources)
		},
		"dot name":      func(s *SavedPlan) { s.Sources[0].Name = ".."; s.Plan.SpecHash = SourceHash(s.Sources) },
		"no fabric":     func(s *SavedPlan) { s.Plan.Fabric = "" },
		"twice":         func(s *SavedPlan) { s.Plan.Devices = []*DevicePlan{{Address: "switch.a"}, {Address: "switch.a"}} },
		"nil device":    func(s *SavedPlan) { s.Plan.Devices = []*DevicePlan{nil} },
		"no spec path":  func(s *SavedPlan) { s.SpecDir, s.SpecPath = "", "" },
		"relative path": func(s *SavedPlan) { s.SpecDir, s.SpecPath = "", "fabric" },
	} {
		sp := signable()
		edit(sp)
		if err := sp.Check("p"); err == nil || !strings.Contains(err.Error(), "nothing was applied") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The sources are named as files of the recorded spec directory; a plan
// without spec_dir derives it from its spec path alone (no disk, no
// working directory).
func TestSavedPlanSpecFiles(t *testing.T) {
	sp := signable()
	if got := sp.SpecFiles()[0].Name; got != "/srv/fabric/a.fab.hcl" {
		t.Errorf("SpecFiles %q", got)
	}
	sp.SpecDir = ""
	if got := sp.Dir(); got != "/srv/fabric" {
		t.Errorf("directory spec: Dir %q", got)
	}
	sp.SpecPath = "/srv/fabric/a.fab.hcl"
	if got := sp.Dir(); got != "/srv/fabric" {
		t.Errorf("file spec: Dir %q", got)
	}
}
