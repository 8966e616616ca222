package cli

import (
	"bytes"

	"github.com/fabctl/fabctl/spec"
	"github.com/hashicorp/hcl/v2"
)

// redactSecrets returns files in which the literal of every "Secret must
// be a reference" diagnostic is masked, so snippets in terminals and CI
// logs do not repeat the password the diagnostic is about. Masking keeps
// every byte offset (each byte of the literal becomes '*', quotes and
// newlines stay), so ranges and highlights are unchanged. Files without
// such a diagnostic are returned as they are.
func redactSecrets(diags hcl.Diagnostics, files map[string]*hcl.File) map[string]*hcl.File {
	var out map[string]*hcl.File
	for _, d := range diags {
		if info := spec.Info(d); info == nil || !info.Secret || d.Subject == nil {
			continue
		}
		r := *d.Subject
		f := files[r.Filename]
		if f == nil || r.Start.Byte < 0 || r.End.Byte > len(f.Bytes) || r.Start.Byte >= r.End.Byte {
			continue
		}
		// Only a literal (quoted string or heredoc) holds the secret; an
		// expression such as var.pw shows no value.
		if lit := f.Bytes[r.Start.Byte:r.End.Byte]; lit[0] != '"' && !bytes.HasPrefix(lit, []byte("<<")) {
			continue
		}
		if out == nil {
			out = make(map[string]*hcl.File, len(files))
			for k, v := range files {
				out[k] = v
			}
		}
		if out[r.Filename] == f { // first redaction in this file: copy it
			c := *f
			c.Bytes = append([]byte(nil), f.Bytes...)
			out[r.Filename] = &c
		}
		b := out[r.Filename].Bytes
		start, end := r.Start.Byte, r.End.Byte
		switch {
		case b[start] == '"' && end-start >= 2 && b[end-1] == '"':
			start, end = start+1, end-1 // keep the quotes
		case b[start] == '<':
			// Heredoc: keep the <<MARKER line and the closing marker.
			if i := bytes.IndexByte(b[start:end], '\n'); i >= 0 {
				start += i + 1
			}
			if i := bytes.LastIndexByte(b[start:end], '\n'); i >= 0 {
				end = start + i
			}
		}
		for i := start; i < end; i++ {
			if b[i] != '\n' && b[i] != '\r' {
				b[i] = '*'
			}
		}
	}
	if out == nil {
		return files
	}
	return out
}
