package drivers

import "testing"

// Issue 21: secrets are redacted as whole tokens: a short password's
// characters inside ordinary words are left alone (masking them would
// both garble the message and reveal the password).
func TestRedactSecretsWholeTokens(t *testing.T) {
	for _, c := range []struct {
		in      string
		secrets []string
		want    string
	}{
		{"authentication failed", []string{"a"}, "authentication failed"},
		{"ssh admin:a@10.0.0.1: denied", []string{"a"}, "ssh admin:<redacted>@10.0.0.1: denied"},
		{"password a", []string{"a"}, "password <redacted>"},
		{`"password": "s3cret-Pa55"`, []string{"s3cret-Pa55"}, `"password": "<redacted>"`},
		{"xs3cret-Pa55 s3cret-Pa55", []string{"s3cret-Pa55"}, "xs3cret-Pa55 <redacted>"},
		{"enable\nhunter22\n", []string{"hunter22"}, "enable\n<redacted>\n"},
		{"nothing", nil, "nothing"},
		{"key=", []string{""}, "key="},
	} {
		if got := RedactSecrets(c.in, c.secrets, "<redacted>"); got != c.want {
			t.Errorf("RedactSecrets(%q, %q) = %q, want %q", c.in, c.secrets, got, c.want)
		}
	}
}

// Issue 37: device text is masked by secret keyword, whatever the value,
// and never by searching for a known secret.
func TestRedactSecretWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"username admin privilege 15 secret sha512 $6$x$y", "username admin privilege 15 secret sha512 <r>"},
		{"username admin password 5 $5$abc role network-admin", "username admin password 5 <r> role network-admin"},
		{"enable secret 0 plain", "enable secret 0 <r>"},
		{`tacacs-server host 10.0.0.1 key 7 "0832"`, "tacacs-server host 10.0.0.1 key 7 <r>"},
		{`  "password": "xyz",`, `  "password": "<r>",`},
		{"invalid password: hunter2 for admin", "invalid password: <r> for admin"},
		{"password='hunter2'", "password=<r>"},
		{"[sudo] password for admin: ", "[sudo] password for admin: "},
		{"Password: ", "Password: "},
		{"admin@leaf1:~$ show users admin", "admin@leaf1:~$ show users admin"},
		{"passwords differ", "passwords differ"},
	} {
		if got := RedactSecretWords(c.in, "<r>"); got != c.want {
			t.Errorf("RedactSecretWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
