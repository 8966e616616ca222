package spec

import (
	"fmt"
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

func TestLineNav(t *testing.T) {
	src := []byte("fabric \"x\" {}\n\nswitch \"leaf1\" {\n  platform = \"sonic\"\n  port \"E1\" {\n    speed = \"1G\"\n  }\n}\n")
	nav := lineNav(src)
	off := strings.Index(string(src), "speed")
	if got := nav.ContextString(off); got != `switch "leaf1"` {
		t.Errorf("context %q", got)
	}
	if got := nav.ContextString(0); got != "" {
		t.Errorf("context at 0: %q", got)
	}
}

// TestChunkedEqualsWhole loads a large spec in chunks and checks the
// model and a diagnostic's position match a whole-file parse.
func TestChunkedEqualsWhole(t *testing.T) {
	var b strings.Builder
	b.WriteString("fabric \"x\" {}\n")
	for i := 0; b.Len() < chunkMinFile+chunkTarget; i++ {
		fmt.Fprintf(&b, "switch \"s%d\" {\n  platform = \"eos\"\n  address  = \"192.0.2.1\"\n}\n", i)
	}
	b.WriteString("switch \"bad\" {\n  platform = \"eos\"\n  address = \"a\"\n  adress = \"x\"\n}\n")
	src := b.String()
	if len(splitTopLevel([]byte(src))) < 2 {
		t.Fatal("not chunked")
	}
	s, diags := LoadFiles([]File{{Name: "big.fab.hcl", Data: []byte(src)}}, LoadOptions{Platforms: testPlatforms})
	if len(diags) != 1 || diags[0].Summary != "Unsupported argument" {
		for _, d := range diags {
			t.Log(d)
		}
		t.Fatalf("want one diagnostic")
	}
	wantLine := strings.Count(src[:strings.Index(src, "adress")], "\n") + 1
	if diags[0].Subject.Start.Line != wantLine {
		t.Errorf("line %d, want %d", diags[0].Subject.Start.Line, wantLine)
	}
	js := ToJSON(diags, s.Files)
	if js[0].Snippet == nil || js[0].Snippet.Context != `switch "bad"` || !strings.Contains(js[0].Snippet.Code, "adress") {
		t.Errorf("snippet %+v", js[0].Snippet)
	}
	n := strings.Count(src, "switch \"s")
	s, diags = LoadFiles([]File{{Name: "big.fab.hcl", Data: []byte(strings.Replace(src, "  adress = \"x\"\n", "", 1))}}, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() || len(s.Switches) != n+1 {
		t.Errorf("got %d switches, want %d: %v", len(s.Switches), n+1, diags)
	}
}
