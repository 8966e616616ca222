package spec

import (
	"bytes"
	"fmt"
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
		return parseWhole(src, name)
	}
	bodies, diags := parseChunks(src, name, chunks)
	var all hcl.Diagnostics
	for _, d := range diags {
		if d.HasErrors() {
			return hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		}
		all = append(all, d...)
	}
	body, ok := mergeChunks(bodies, name, hcl.InitialPos)
	if !ok {
		return hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	}
	return &hcl.File{Body: body, Bytes: src, Nav: lineNav(src)}, all
}

// parseChunks parses the chunks of src in parallel.
func parseChunks(src []byte, name string, chunks []chunk) ([]*hclsyntax.Body, []hcl.Diagnostics) {
	bodies := make([]*hclsyntax.Body, len(chunks))
	diags := make([]hcl.Diagnostics, len(chunks))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(chunks)); w++ {
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
	return bodies, diags
}

// mergeChunks concatenates the chunks' top-level items into one body from
// start to the end of the last chunk. Not ok: a top-level attribute set in
// two chunks, which hclsyntax reports when parsing whole.
func mergeChunks(bodies []*hclsyntax.Body, name string, start hcl.Pos) (*hclsyntax.Body, bool) {
	last := bodies[len(bodies)-1]
	body := &hclsyntax.Body{
		Attributes: hclsyntax.Attributes{},
		Blocks:     hclsyntax.Blocks{},
		SrcRange:   hcl.Range{Filename: name, Start: start, End: last.SrcRange.End},
		EndRange:   last.EndRange,
	}
	for _, b := range bodies {
		for k, a := range b.Attributes {
			if _, dup := body.Attributes[k]; dup {
				return nil, false
			}
			body.Attributes[k] = a
		}
		body.Blocks = append(body.Blocks, b.Blocks...)
	}
	return body, true
}

// parseWhole parses a file, keeping its tree: exactly the file
// hclsyntax.ParseConfig returns (tree, Nav behaviour, diagnostics), built
// faster. Files of several chunks are parsed chunk by chunk, in parallel,
// each with the literal-subset parser when it takes the chunk (the same
// tree, see fastparse.go) and merged, the top-level body spanning from the
// file's first token as ParseConfig's does; any diagnostic, and the file
// is parsed whole by hclsyntax. A 0.5 MB generated inventory (below
// chunkMinFile, so not streamed) loads in ~40 ms instead of ~170 ms.
func parseWhole(src []byte, name string) (*hcl.File, hcl.Diagnostics) {
	return parseWholeN(src, name, chunkTarget)
}

// parseWholeN is parseWhole with chunks of about target bytes (for tests).
func parseWholeN(src []byte, name string, target int) (*hcl.File, hcl.Diagnostics) {
	if chunks := splitTopLevelN(src, target); len(chunks) >= 2 {
		bodies, diags := parseChunks(src, name, chunks)
		for _, d := range diags {
			if len(d) > 0 {
				return hclsyntax.ParseConfig(src, name, hcl.InitialPos)
			}
		}
		if body, ok := mergeChunks(bodies, name, bodies[0].SrcRange.Start); ok {
			return &hcl.File{Body: body, Bytes: src, Nav: syntaxNav{root: body}}, nil
		}
		return hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	}
	if b, ok := fastParse(src, name, hcl.InitialPos); ok {
		return &hcl.File{Body: b, Bytes: src, Nav: syntaxNav{root: b}}, nil
	}
	return hclsyntax.ParseConfig(src, name, hcl.InitialPos)
}

// syntaxNav is hclsyntax's navigation (unexported, the Nav of the files
// ParseConfig returns), method for method: the header of the top-level
// block around an offset, for diagnostic snippets.
type syntaxNav struct {
	root *hclsyntax.Body
}

func (n syntaxNav) block(offset int) *hclsyntax.Block {
	for _, candidate := range n.root.Blocks {
		if candidate.Range().ContainsOffset(offset) {
			return candidate
		}
	}
	return nil
}

func (n syntaxNav) ContextString(offset int) string {
	block := n.block(offset)
	if block == nil {
		return ""
	}
	if len(block.Labels) == 0 {
		return block.Type
	}
	buf := &bytes.Buffer{}
	buf.WriteString(block.Type)
	for _, label := range block.Labels {
		fmt.Fprintf(buf, " %q", label)
	}
	return buf.String()
}

func (n syntaxNav) ContextDefRange(offset int) hcl.Range {
	block := n.block(offset)
	if block == nil {
		return hcl.Range{}
	}
	return block.DefRange()
}

// parseChunk parses one chunk: with the literal-subset parser when it
// takes the chunk (the same tree, see fastparse.go), else with hclsyntax.
func parseChunk(src []byte, name string, start hcl.Pos) (*hclsyntax.Body, hcl.Diagnostics) {
	return parseChunkWith(src, name, start, &fpAlloc{})
}

// parseChunkWith is parseChunk with the literal-subset parser's nodes
// carved from a.
func parseChunkWith(src []byte, name string, start hcl.Pos, a *fpAlloc) (*hclsyntax.Body, hcl.Diagnostics) {
	if b, ok := fastParseWith(src, name, start, a); ok {
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
