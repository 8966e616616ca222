package cli

import (
	"strings"
	"testing"
)

func TestSecretLiteralIsRedacted(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	src := `fabric "t" {}

credentials "a" {
  username = "admin"
  password = "hunter2"
  token    = <<EOT
s3cr3t-token
EOT
}

variable "pw" {
  default = "from-a-variable"
}

credentials "b" {
  password = var.pw
}
`
	writeFile(t, "s.fab.hcl", src)
	for _, args := range [][]string{{"validate", "s.fab.hcl"}, {"validate", "--json", "s.fab.hcl"}} {
		f, _, stdout, _ := testFactory()
		if code := runCLI(f, args...); code != ExitError {
			t.Fatalf("%v: exit %d", args, code)
		}
		out := stdout.String()
		for _, secret := range []string{"hunter2", "s3cr3t-token"} {
			if strings.Contains(out, secret) {
				t.Errorf("%v prints the secret %q:\n%s", args, secret, out)
			}
		}
		if strings.Count(out, "Secret must be a reference") != 3 {
			t.Errorf("%v: want 3 secret diagnostics:\n%s", args, out)
		}
		if !strings.Contains(out, `password = `) || !strings.Contains(out, `"*******`) || !strings.Contains(out, "<<EOT") || !strings.Contains(out, "var.pw") {
			t.Errorf("%v: snippets not masked as expected:\n%s", args, out)
		}
	}
}
