package sshtransport

import (
	"bytes"
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	var b bytes.Buffer
	tl := &tail{max: 8, b: &b}
	for _, w := range []string{"0123", "456789", "abc"} {
		if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatal(n, err)
		}
	}
	if b.String() != "56789abc" {
		t.Fatalf("%q", b.String())
	}
}

// With onLine, tail hands over complete lines as they arrive, across
// writes, and still keeps only its last bytes; a runaway line without a
// newline is dropped rather than grown without bound.
func TestTailLines(t *testing.T) {
	var b bytes.Buffer
	var lines []string
	tl := &tail{max: 64, b: &b, onLine: func(l string) { lines = append(lines, l) }}
	for _, w := range []string{"fabctl-traffic: re", "ady 198.18.0.1:4", "1234\nnote: x\n", "partial"} {
		if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatal(n, err)
		}
	}
	if strings.Join(lines, "|") != "fabctl-traffic: ready 198.18.0.1:41234|note: x" {
		t.Errorf("lines %q", lines)
	}
	if b.String() != "fabctl-traffic: ready 198.18.0.1:41234\nnote: x\npartial" {
		t.Errorf("tail %q", b.String())
	}
	lines = nil
	_, _ = tl.Write([]byte("\n" + strings.Repeat("y", 70)))
	_, _ = tl.Write([]byte("yyy\nz\n"))
	if len(lines) != 2 || lines[0] != "partial" || lines[1] != "z" {
		t.Errorf("after a runaway line: %q", lines)
	}
}

// TestCappedStdout: stdout is kept up to its cap and refused past it
// (the session's copy then stops), once and for all.
func TestCappedStdout(t *testing.T) {
	var b bytes.Buffer
	w := &capped{b: &b, max: 8}
	if n, err := w.Write([]byte("12345")); n != 5 || err != nil {
		t.Fatal(n, err)
	}
	if _, err := w.Write([]byte("6789")); err == nil || !w.over {
		t.Fatal("past the cap accepted")
	}
	if _, err := w.Write([]byte("x")); err == nil || b.String() != "12345" {
		t.Fatalf("after the cap: %v, %q", err, b.String())
	}
}
