package apply

import (
	"os"
	"strings"

	"github.com/fabctl/fabctl/spec"
)

// SecretValues resolves the secrets the spec's credentials point at
// (env("X") through getenv, file("p") by reading the file), for the
// journal's redactor only: the values never leave this process, and a
// secret that cannot be resolved is skipped (the driver reports it when it
// connects).
func SecretValues(creds []*spec.Credentials, getenv func(string) string) []string {
	var out []string
	add := func(ref *spec.SecretRef) {
		if ref == nil {
			return
		}
		var v string
		switch ref.Kind {
		case "env":
			if getenv != nil {
				v = getenv(ref.Name)
			}
		case "file":
			st, err := os.Stat(ref.Path())
			if err != nil || !st.Mode().IsRegular() || st.Size() > 1<<20 {
				return
			}
			b, err := os.ReadFile(ref.Path())
			if err != nil {
				return
			}
			v = string(b)
		}
		if v == "" {
			return
		}
		out = append(out, v)
		if t := strings.TrimSpace(v); t != v && t != "" {
			out = append(out, t)
		}
		// A multi-line secret (a key) is also masked line by line.
		if strings.Contains(v, "\n") {
			for _, line := range strings.Split(v, "\n") {
				if line = strings.TrimSpace(line); len(line) >= 16 {
					out = append(out, line)
				}
			}
		}
	}
	for _, c := range creds {
		if c == nil {
			continue
		}
		add(c.Password)
		add(c.PrivateKey)
		add(c.Passphrase)
		add(c.EnablePassword)
		add(c.Token)
	}
	return out
}
