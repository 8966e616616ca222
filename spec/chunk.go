package spec

import (
	"bytes"
	"runtime"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Large specs (a generated inventory of thousands of hosts) are parsed in
// chunks of whole top-level blocks, in parallel. hclsyntax lexes a file
// into one token slice before parsing; for a multi-megabyte file that slice
// and its regrowth dominate time and peak memory (measured: a 6 MB spec
// allocated 1.1 GB in the lexer alone). Each chunk is parsed with its true
// start position, so every range still points into the original file.
// When a chunk does not parse, the whole file is parsed again in one piece
// so diagnostics are exactly hcl's own.

const (
	chunkMinFile = 512 << 10 // smaller files are parsed whole
	chunkTarget  = 64 << 10  // preferred chunk size
)

type chunk struct {
	start hcl.Pos
	end   int
	// globals is set when a top-level line of the chunk starts with
	// something other than a switch, host, link, validate or infiniband
	// block (a fabric, class, variable... or anything unrecognised): the
	// streaming loader parses such chunks first. It is a prediction from
	// the text; the loader checks the parsed blocks.
	globals bool
}

// Bytes the splitter must look at, per mode; it skips everything else.
var normalSpecial, strSpecial [256]bool

func init() {
	for _, c := range "\"{}#/<\n" {
		normalSpecial[c] = true
	}
	for _, c := range "\\\"$%\n" {
		strSpecial[c] = true
	}
}

// splitTopLevel finds line starts at brace depth 0 outside strings,
// heredocs and comments, and groups the file into chunks of about
// chunkTarget bytes. It returns nil when the structure is not simple
// enough to split with confidence.
func splitTopLevel(src []byte) []chunk { return splitTopLevelN(src, chunkTarget) }

// splitTopLevelN is splitTopLevel with chunks of about target bytes (the
// tests cut at every top-level line with target 1).
func splitTopLevelN(src []byte, target int) []chunk {
	type mode int
	const (
		normal mode = iota
		str         // inside "..."
	)
	// stack of modes: a template interpolation inside a string pushes
	// normal with its own brace depth.
	type frame struct {
		m     mode
		depth int
	}
	stack := []frame{{normal, 0}}
	var chunks []chunk
	cur := chunk{start: hcl.Pos{Line: 1, Column: 1, Byte: 0}}
	line := 1
	i := 0
	n := len(src)
	lineStart := true
	for i < n {
		top := &stack[len(stack)-1]
		if lineStart {
			lineStart = false
			if len(stack) == 1 && top.depth == 0 {
				if i-cur.start.Byte >= target {
					cur.end = i
					chunks = append(chunks, cur)
					cur = chunk{start: hcl.Pos{Line: line, Column: 1, Byte: i}}
				}
				if !streamableLine(src[i:]) {
					cur.globals = true
				}
			}
		}
		// Skip to the next byte that matters in this mode.
		special := &normalSpecial
		if top.m == str {
			special = &strSpecial
		}
		for i < n && !special[src[i]] {
			i++
		}
		if i == n {
			break
		}
		c := src[i]
		switch top.m {
		case str:
			switch {
			case c == '\\':
				i++ // skip the escaped byte
			case c == '"':
				stack = stack[:len(stack)-1]
			case (c == '$' || c == '%') && i+1 < n && src[i+1] == '{':
				if i+2 < n && src[i+2] == '{' {
					return nil // literal "${{" escapes: rare, do not guess
				}
				stack = append(stack, frame{normal, 0})
				i++
			case c == '\n':
				return nil // newline in a quoted string is an error: let hcl say so
			}
		case normal:
			switch {
			case c == '"':
				stack = append(stack, frame{str, 0})
			case c == '{':
				top.depth++
			case c == '}':
				if top.depth == 0 {
					if len(stack) == 1 {
						return nil // unbalanced
					}
					stack = stack[:len(stack)-1] // end of interpolation
				} else {
					top.depth--
				}
			case c == '#' || (c == '/' && i+1 < n && src[i+1] == '/'):
				for i < n && src[i] != '\n' {
					i++
				}
				continue
			case c == '/' && i+1 < n && src[i+1] == '*':
				i += 2
				for i+1 < n && !(src[i] == '*' && src[i+1] == '/') {
					if src[i] == '\n' {
						line++
					}
					i++
				}
				i += 2
				continue
			case c == '<' && i+1 < n && src[i+1] == '<':
				return nil // heredocs: parse whole
			}
		}
		if c == '\n' {
			line++
			lineStart = true
		}
		i++
	}
	if len(stack) != 1 || stack[0].depth != 0 {
		return nil
	}
	cur.end = n
	chunks = append(chunks, cur)
	return chunks
}

// streamableLine reports whether a top-level line is blank, a comment, or
// starts a block the streaming loader decodes as it goes.
func streamableLine(b []byte) bool {
	j := 0
	for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	if j == len(b) {
		return true
	}
	switch b[j] {
	case '\n', '\r', '#', '/':
		return true
	}
	k := j
	for k < len(b) && isIdentCont(b[k]) {
		k++
	}
	switch string(b[j:k]) {
	case "switch", "host", "link", "validate", "infiniband":
		return true
	}
	return false
}

// parseNative parses an HCL native-syntax file, in parallel chunks when it
// is large. The returned file's Bytes is the whole source.
func parseNative(src []byte, name string) (*hcl.File, hcl.Diagnostics) {
	var chunks []chunk
	if len(src) >= chunkMinFile {
		chunks = splitTopLevel(src)
	}
	if len(chunks) < 2 {
		return hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	}
	bodies := make([]*hclsyntax.Body, len(chunks))
	diags := make([]hcl.Diagnostics, len(chunks))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ch := chunks[i]
				bodies[i], diags[i] = parseChunk(src[ch.start.Byte:ch.end], name, ch.start)
			}
		}()
	}
	for i := range chunks {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, d := range diags {
		if d.HasErrors() {
			return hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		}
	}
	// Concatenate the chunks' top-level items into one body.
	last := bodies[len(bodies)-1]
	body := &hclsyntax.Body{SrcRange: hcl.Range{Filename: name, Start: hcl.InitialPos, End: last.SrcRange.End}}
	body.Attributes = hclsyntax.Attributes{}
	var all hcl.Diagnostics
	for i, b := range bodies {
		for k, a := range b.Attributes {
			if prev, dup := body.Attributes[k]; dup {
				// hcl reports this itself when parsing whole.
				_ = prev
				return hclsyntax.ParseConfig(src, name, hcl.InitialPos)
			}
			body.Attributes[k] = a
		}
		body.Blocks = append(body.Blocks, b.Blocks...)
		all = append(all, diags[i]...)
	}
	body.EndRange = last.EndRange
	return &hcl.File{Body: body, Bytes: src, Nav: lineNav(src)}, all
}

// parseChunk parses one chunk: with the literal-subset parser when it
// takes the chunk (the same tree, see fastparse.go), else with hclsyntax.
func parseChunk(src []byte, name string, start hcl.Pos) (*hclsyntax.Body, hcl.Diagnostics) {
	if b, ok := fastParse(src, name, start); ok {
		return b, nil
	}
	f, diags := hclsyntax.ParseConfig(src, name, start)
	return f.Body.(*hclsyntax.Body), diags
}

// lineNav answers ContextString for large files without keeping their
// syntax tree alive: the header line of the top-level block around the
// offset (`switch "leaf1"`), found by scanning back to the last line that
// starts in column 1 and opens a block.
type lineNav []byte

func (src lineNav) ContextString(offset int) string {
	if offset > len(src) {
		offset = len(src)
	}
	end := offset
	for end > 0 {
		start := bytes.LastIndexByte(src[:end], '\n') + 1
		line := strings.TrimRight(string(src[start:end]), " \t\r")
		if end != offset && len(line) > 0 && line[0] != ' ' && line[0] != '\t' && line[0] != '#' && line[0] != '/' && line[0] != '}' && strings.HasSuffix(line, "{") {
			return strings.TrimSpace(strings.TrimSuffix(line, "{"))
		}
		if start == 0 {
			break
		}
		end = start - 1
	}
	return ""
}
