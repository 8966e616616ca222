package spec

import (
	"strings"
	"testing"
)

func TestSplitTopLevel(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3*chunkTarget; i++ {
		b.WriteString("# comment with { brace\nswitch \"s\" {\n  address = \"${format(\"%s}\", \"x\")}\" /* } */\n  x = { a = \"}\" }\n}\n")
	}
	src := []byte(b.String())
	ch := splitTopLevel(src)
	if len(ch) < 3 {
		t.Fatalf("got %d chunks", len(ch))
	}
	for i, c := range ch {
		if !strings.HasPrefix(string(src[c.start.Byte:]), "# comment") {
			t.Errorf("chunk %d starts mid-block at byte %d line %d", i, c.start.Byte, c.start.Line)
		}
		if got := strings.Count(string(src[:c.start.Byte]), "\n") + 1; got != c.start.Line {
			t.Errorf("chunk %d line %d, want %d", i, c.start.Line, got)
		}
	}
	for _, bad := range []string{"a {\n", "}\n", "x = <<EOT\n}\nEOT\n", "s = \"a\nb\"\n"} {
		if splitTopLevel([]byte(bad)) != nil {
			t.Errorf("%q split", bad)
		}
	}
}
