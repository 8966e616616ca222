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
