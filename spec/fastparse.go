package spec

import (
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// fastParse is a parser for the literal subset of HCL native syntax, the
// form a generated inventory is written in: blocks with quoted or bare
// labels whose bodies hold attributes set to quoted strings without
// templates, numbers, true/false/null, a negated number, or tuples of
// those, plus nested blocks of the same kind, comments and blank lines.
//
// Why it exists next to hclsyntax: on the 8.4 MB benchmark pod,
// hclsyntax.ParseConfig spent ~2 CPU-seconds and ~1 GB of allocation,
// mostly lexing (a Token per lexeme, each position counted in grapheme
// clusters through textseg) and building template parts through the
// general template parser. This parser reads the same bytes directly into
// the same AST: BenchmarkParseChunks (1/8 of the pod, one core) measured
// 313 ms, 159 MB, 721k allocations for hclsyntax against 38 ms, 22 MB,
// 49k allocations for this parser.
//
// It produces exactly the *hclsyntax.Body that hclsyntax.ParseConfig(src,
// filename, start) produces — same node types, same ranges, same values —
// and returns ok=false on anything outside the subset or anything it does
// not fully understand (templates, expressions, objects, heredocs,
// single-line blocks, non-ASCII outside line comments, any syntax error);
// the caller then parses with hclsyntax, so diagnostics are always
// hclsyntax's own. The differential tests (fastparse_test.go, FuzzFastParse)
// compare the two ASTs node by node.
//
// Positions: hcl counts columns in grapheme clusters. The subset is ASCII
// (where every byte is one cluster, and "\r\n" is one newline), except
// that a line comment ending in a newline may hold any valid UTF-8: its
// end is the start of the next line whatever its width.
//
// Allocation: the parser reads the chunk as a string without copying it
// (the loader keeps the file's bytes anyway, as hcl.File.Bytes, and
// File.Data is documented not to change after LoadFiles), so identifiers,
// labels and string values without escapes are substrings of the file:
// the model holds no second copy of the source (44 MB at 16,384 hosts,
// where each chunk was copied once before). And the
// nodes are carved from slabs (fpAlloc): 49k allocations instead of 194k
// with one per node, less work for the allocator and the GC. A chunk's
// tree lives and dies as a whole, and the model keeps no node, only
// strings, so a slab pins nothing that would otherwise be freed; model
// strings pin the file's bytes, which the spec keeps in any case.
func fastParse(src []byte, filename string, start hcl.Pos) (*hclsyntax.Body, bool) {
	return fastParseWith(src, filename, start, &fpAlloc{})
}

// fastParseWith is fastParse with the nodes carved from a.
func fastParseWith(src []byte, filename string, start hcl.Pos, a *fpAlloc) (*hclsyntax.Body, bool) {
	p := fastParser{
		alloc:     a,
		src:       unsafe.String(unsafe.SliceData(src), len(src)),
		filename:  filename,
		base:      start.Byte,
		line:      start.Line,
		lineStart: 1 - start.Column, // column of byte 0 is start.Column
		nl:        true,
	}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		return nil, false // hclsyntax strips a BOM and shifts positions: leave it to hclsyntax
	}
	// The top-level body starts at the first token hclsyntax's peeker
	// returns (a newline, a comment ending a line, an item, or EOF).
	first := p.peek()
	if first.kind == fpBad {
		return nil, false
	}
	body, ok := p.body(true, p.rng(first))
	if !ok {
		return nil, false
	}
	return body, true
}

type fpKind uint8

const (
	fpBad fpKind = iota
	fpEOF
	fpNewline // a newline, or a # or // comment with its newline
	fpIdent
	fpEq
	fpOBrace
	fpCBrace
	fpOBrack
	fpCBrack
	fpComma
	fpMinus
	fpString
	fpNumber
)

type fpTok struct {
	kind       fpKind
	start, end hcl.Pos
	str        string    // fpString: the value with escapes resolved
	num        cty.Value // fpNumber
}

type fastParser struct {
	src      string
	filename string
	base     int // Byte of src[0]

	// Lexer state: the next unread byte, its line, and the offset at
	// which that line's column 1 is (negative on a first line that does
	// not start in column 1).
	off, line, lineStart int

	// nl is hclsyntax's newline mode: true in bodies, false inside
	// brackets, where newlines and line comments are skipped.
	nl bool

	// One token of lookahead, scanned in mode peekNL, and the lexer state
	// after it.
	peeked                  bool
	peekNL                  bool
	tok                     fpTok
	aOff, aLine, aLineStart int
	prev                    hcl.Range // the last token read (hclsyntax's PrevRange)
	scratch                 []byte
	alloc                   *fpAlloc
}

// fpAlloc hands out nodes from slabs. A slab is never moved or grown: a
// node's address stays valid while its tree is used. reset lets the
// slabs be used again from the start, for the next chunk of a worker
// whose previous tree is dead (see unit.decode): the streaming loader's
// workers then parse a whole pod with the same few slabs instead of
// allocating ~850 MB of nodes at 16,384 hosts (and the GC work that
// comes with it).
type fpAlloc struct {
	attrs  slab[hclsyntax.Attribute]
	tmpls  slab[hclsyntax.TemplateExpr]
	lits   slab[hclsyntax.LiteralValueExpr]
	tuples slab[hclsyntax.TupleConsExpr]
	bodies slab[hclsyntax.Body]
	blocks slab[hclsyntax.Block]
	exprs  slab[hclsyntax.Expression]
	ranges slab[hcl.Range]
	strs   slab[string]
	// maps are the bodies' attribute maps, emptied on reuse.
	maps  []hclsyntax.Attributes
	nmaps int
	// hcl.Block views of the tree's blocks (hclBlocks): small lists from
	// slabs, one large list (a chunk's top level) from a reused buffer.
	hblocks slab[hcl.Block]
	hptrs   slab[*hcl.Block]
	bigVals []hcl.Block
	bigPtrs hcl.Blocks
	bigUsed bool
}

// hclBlocks returns room for n hcl.Blocks and pointers to them.
func (a *fpAlloc) hclBlocks(n int) ([]hcl.Block, hcl.Blocks) {
	if n <= 8 {
		return many(&a.hblocks, n), many(&a.hptrs, n)
	}
	if a.bigUsed {
		return make([]hcl.Block, n), make(hcl.Blocks, n)
	}
	a.bigUsed = true
	if cap(a.bigVals) < n {
		a.bigVals, a.bigPtrs = make([]hcl.Block, n), make(hcl.Blocks, n)
	}
	return a.bigVals[:n:n], a.bigPtrs[:n:n]
}

// reset makes every node handed out so far free for reuse: only when no
// tree built from a is used any more.
func (a *fpAlloc) reset() {
	a.attrs.reset()
	a.tmpls.reset()
	a.lits.reset()
	a.tuples.reset()
	a.bodies.reset()
	a.blocks.reset()
	a.exprs.reset()
	a.ranges.reset()
	a.strs.reset()
	a.nmaps = 0
	a.hblocks.reset()
	a.hptrs.reset()
	a.bigUsed = false
}

// attrMap is an empty attribute map.
func (a *fpAlloc) attrMap() hclsyntax.Attributes {
	if a.nmaps < len(a.maps) {
		m := a.maps[a.nmaps]
		clear(m)
		a.nmaps++
		return m
	}
	m := hclsyntax.Attributes{}
	a.maps = append(a.maps, m)
	a.nmaps++
	return m
}

// Slabs start small and double up to fpSlab elements, so a small chunk
// wastes little in the unused tail of its slabs.
const fpSlab = 256

// slab is a list of arrays of T handed out in order; all are kept for
// reset.
type slab[T any] struct {
	all [][]T
	i   int // all[i] is cur's array
	cur []T
}

func (s *slab[T]) next() {
	if s.cur != nil && s.i+1 < len(s.all) {
		s.i++
		s.cur = s.all[s.i][:0]
		return
	}
	n := 16
	if len(s.all) > 0 {
		n = min(2*cap(s.all[len(s.all)-1]), fpSlab)
	}
	s.all = append(s.all, make([]T, 0, n))
	s.i = len(s.all) - 1
	s.cur = s.all[s.i]
}

func (s *slab[T]) reset() {
	if len(s.all) > 0 {
		s.i, s.cur = 0, s.all[0][:0]
	}
}

// one returns a pointer to a new T from the slab, to be set whole (a
// reused slot holds an old value).
func one[T any](s *slab[T]) *T {
	if len(s.cur) == cap(s.cur) {
		s.next()
	}
	s.cur = s.cur[:len(s.cur)+1]
	return &s.cur[len(s.cur)-1]
}

// many returns a slice of n Ts (capacity n) from the slab, to be set
// whole.
func many[T any](s *slab[T], n int) []T {
	if n > 8 {
		return make([]T, n)
	}
	if len(s.cur)+n > cap(s.cur) {
		s.next()
	}
	i := len(s.cur)
	s.cur = s.cur[:i+n]
	return s.cur[i : i+n : i+n]
}

func (p *fastParser) rng(t *fpTok) hcl.Range {
	return hcl.Range{Filename: p.filename, Start: t.start, End: t.end}
}

func (p *fastParser) peek() *fpTok {
	if !p.peeked || p.peekNL != p.nl {
		p.scan()
		p.peeked, p.peekNL = true, p.nl
	}
	return &p.tok
}

// read consumes the next token. The result is valid until the next peek.
func (p *fastParser) read() *fpTok {
	t := p.peek()
	p.off, p.line, p.lineStart = p.aOff, p.aLine, p.aLineStart
	p.peeked = false
	p.prev = p.rng(t)
	return t
}

// text is the source of a token.
func (p *fastParser) text(t *fpTok) string {
	return p.src[t.start.Byte-p.base : t.end.Byte-p.base]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isIdentCont(c byte) bool {
	return isIdentStart(c) || isDigit(c) || c == '-'
}

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// scan lexes the next token in mode p.nl into p.tok and the state after
// it into p.a*, the way hclsyntax's scanner and peeker together would.
func (p *fastParser) scan() {
	p.tok = fpTok{}
	p.aOff, p.aLine, p.aLineStart = p.lex(&p.tok)
}

func (p *fastParser) lex(t *fpTok) (off, line, lineStart int) {
	src := p.src
	off, line, lineStart = p.off, p.line, p.lineStart
	pos := func(o int) hcl.Pos {
		return hcl.Pos{Line: line, Column: o - lineStart + 1, Byte: p.base + o}
	}
	for {
		// hclsyntax's scanner skips spaces and tabs between tokens, one
		// column per byte.
		for off < len(src) && (src[off] == ' ' || src[off] == '\t') {
			off++
		}
		if off >= len(src) {
			t.kind, t.start = fpEOF, pos(off)
			t.end = t.start
			return
		}
		c := src[off]
		s := off
		switch {
		case c == '\n' || c == '\r':
			if c == '\r' {
				if off+1 >= len(src) || src[off+1] != '\n' {
					t.kind = fpBad // a lone CR is an invalid character
					return
				}
				off++
			}
			off++
			t.start = pos(s)
			line, lineStart = line+1, off
			if p.nl {
				t.kind, t.end = fpNewline, pos(off)
				return
			}
			continue
		case c == '#' || c == '/' && off+1 < len(src) && src[off+1] == '/':
			i := strings.IndexByte(src[off:], '\n')
			if i < 0 {
				// Runs to the end: skipped, and EOF's column counts its
				// characters, so it must be ASCII to count bytes.
				if !isASCII(src[off:]) {
					t.kind = fpBad
					return off, line, lineStart
				}
				off = len(src)
				continue
			}
			end := off + i + 1
			if !isASCII(src[off:end]) && !utf8.ValidString(src[off:end]) {
				t.kind = fpBad
				return off, line, lineStart
			}
			t.start = pos(s)
			off = end
			line, lineStart = line+1, off
			if p.nl {
				// The peeker turns a comment that ends a line into a
				// newline token with the comment's range.
				t.kind, t.end = fpNewline, pos(off)
				return
			}
			continue
		case c == '/' && off+1 < len(src) && src[off+1] == '*':
			i := strings.Index(src[off+2:], "*/")
			if i < 0 {
				t.kind = fpBad
				return off, line, lineStart
			}
			end := off + 2 + i + 2
			for j := off; j < end; j++ {
				switch b := src[j]; {
				case b >= utf8.RuneSelf:
					t.kind = fpBad
					return off, line, lineStart
				case b == '\n':
					line, lineStart = line+1, j+1
				}
			}
			off = end
			continue
		case c == '=':
			if off+1 < len(src) && (src[off+1] == '=' || src[off+1] == '>') {
				t.kind = fpBad // == or =>
				return
			}
			t.kind = fpEq
		case c == '{':
			t.kind = fpOBrace
		case c == '}':
			t.kind = fpCBrace
		case c == '[':
			t.kind = fpOBrack
		case c == ']':
			t.kind = fpCBrack
		case c == ',':
			t.kind = fpComma
		case c == '-':
			t.kind = fpMinus
		case c == '"':
			end, str, ok := p.scanString(off)
			if !ok {
				t.kind = fpBad
				return off, line, lineStart
			}
			t.kind, t.str = fpString, str
			t.start = pos(s)
			off = end
			t.end = pos(off)
			return
		case isDigit(c):
			// hclsyntax's NumberLit: a digit, then digits, dots and
			// exponents (e5, E+5, e-5), not ending in a dot; the longest
			// such match.
			i, good := off+1, off+1
			for i < len(src) {
				b := src[i]
				if isDigit(b) {
					i++
					good = i
					continue
				}
				if b == '.' {
					i++
					continue
				}
				if b == 'e' || b == 'E' {
					j := i + 1
					if j < len(src) && (src[j] == '+' || src[j] == '-') {
						j++
					}
					if j < len(src) && isDigit(src[j]) {
						i = j + 1
						good = i
						continue
					}
				}
				break
			}
			v, err := cty.ParseNumberVal(src[off:good])
			if err != nil || !numberOK(v) {
				t.kind = fpBad // hclsyntax reports an invalid number literal (instrumentFor one too large)
				return
			}
			t.kind, t.num = fpNumber, v
			t.start = pos(s)
			off = good
			t.end = pos(off)
			return
		case isIdentStart(c):
			i := off + 1
			for i < len(src) && isIdentCont(src[i]) {
				i++
			}
			t.kind = fpIdent
			t.start = pos(s)
			off = i
			t.end = pos(off)
			return
		default:
			t.kind = fpBad
			return off, line, lineStart
		}
		// single-byte tokens
		t.start = pos(s)
		off++
		t.end = pos(off)
		return
	}
}

// scanString reads the quoted string at src[off] and resolves its escapes
// as hclsyntax.ParseStringLiteralToken does. Not ok: a template sequence
// (${ or %{, including the $${ and %%{ escapes), a newline, non-ASCII, an
// escape hclsyntax rejects, or no closing quote.
func (p *fastParser) scanString(off int) (end int, s string, ok bool) {
	src := p.src
	i := off + 1
	lit := i // start of the pending literal run
	var buf []byte
	escaped := false
	for {
		if i >= len(src) {
			return 0, "", false
		}
		c := src[i]
		switch {
		case c == '"':
			if !escaped {
				return i + 1, src[off+1 : i], true
			}
			buf = append(buf, src[lit:i]...)
			s = string(buf)
			p.scratch = buf[:0]
			return i + 1, s, true
		case c == '\\':
			if !escaped {
				escaped = true
				buf = p.scratch[:0]
			}
			buf = append(buf, src[lit:i]...)
			if i+1 >= len(src) {
				return 0, "", false
			}
			switch src[i+1] {
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case '"':
				buf = append(buf, '"')
			case '\\':
				buf = append(buf, '\\')
			case 'u', 'U':
				n := 4
				if src[i+1] == 'U' {
					n = 8
				}
				if i+2+n > len(src) {
					return 0, "", false
				}
				var r rune
				for j := i + 2; j < i+2+n; j++ {
					if !isHex(src[j]) {
						return 0, "", false
					}
					r = r<<4 | rune(hexVal(src[j]))
				}
				if r < 0 || utf8.RuneLen(r) < 0 {
					return 0, "", false // "Cannot encode character" in hclsyntax
				}
				buf = utf8.AppendRune(buf, r)
				i += n
			default:
				return 0, "", false
			}
			i += 2
			lit = i
		case c == '$' || c == '%':
			if i+1 < len(src) && src[i+1] == '{' {
				return 0, "", false
			}
			i++
		case c == '\n' || c == '\r' || c >= utf8.RuneSelf:
			return 0, "", false
		default:
			i++
		}
	}
}

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// body mirrors hclsyntax's parser.ParseBody: items up to EOF (top) or the
// closing brace.
func (p *fastParser) body(top bool, startRange hcl.Range) (*hclsyntax.Body, bool) {
	attrs := p.alloc.attrMap()
	blocks := hclsyntax.Blocks{}
	var endRange hcl.Range
	for {
		t := p.peek()
		if top && t.kind == fpEOF || !top && t.kind == fpCBrace {
			endRange = p.rng(t)
			p.read()
			break
		}
		switch t.kind {
		case fpNewline:
			p.read()
			continue
		case fpIdent:
		default:
			return nil, false
		}
		name := p.text(p.read())
		identRange := p.prev
		switch p.peek().kind {
		case fpEq:
			a, ok := p.attribute(name, identRange)
			if !ok {
				return nil, false
			}
			if _, dup := attrs[name]; dup {
				return nil, false // "Attribute redefined"
			}
			attrs[name] = a
		case fpString, fpOBrace, fpIdent:
			b, ok := p.block(name, identRange)
			if !ok {
				return nil, false
			}
			blocks = append(blocks, b)
		default:
			return nil, false
		}
	}
	b := one(&p.alloc.bodies)
	*b = hclsyntax.Body{
		Attributes: attrs,
		Blocks:     blocks,
		SrcRange:   hcl.RangeBetween(startRange, endRange),
		EndRange:   hcl.Range{Filename: endRange.Filename, Start: endRange.End, End: endRange.End},
	}
	return b, true
}

// attribute mirrors finishParsingBodyAttribute for a multi-line body.
func (p *fastParser) attribute(name string, nameRange hcl.Range) (*hclsyntax.Attribute, bool) {
	p.read() // =
	eqRange := p.prev
	expr, ok := p.expr()
	if !ok {
		return nil, false
	}
	endRange := p.prev
	if k := p.peek().kind; k != fpNewline && k != fpEOF {
		return nil, false
	}
	p.read()
	a := one(&p.alloc.attrs)
	*a = hclsyntax.Attribute{
		Name:        name,
		Expr:        expr,
		SrcRange:    hcl.RangeBetween(nameRange, endRange),
		NameRange:   nameRange,
		EqualsRange: eqRange,
	}
	return a, true
}

// block mirrors finishParsingBodyBlock for a multi-line (or empty) block.
func (p *fastParser) block(typ string, typeRange hcl.Range) (*hclsyntax.Block, bool) {
	var labelBuf [4]string
	var rangeBuf [4]hcl.Range
	n := 0
	for {
		t := p.peek()
		switch t.kind {
		case fpString, fpIdent:
			if n == len(labelBuf) {
				return nil, false // more labels than any schema has: leave it to hclsyntax
			}
			s := p.read()
			if s.kind == fpString {
				labelBuf[n] = s.str
			} else {
				labelBuf[n] = p.text(s)
			}
			rangeBuf[n] = p.prev
			n++
			continue
		case fpOBrace:
		default:
			return nil, false
		}
		break
	}
	var labels []string
	var labelRanges []hcl.Range
	if n > 0 {
		labels = many(&p.alloc.strs, n)
		copy(labels, labelBuf[:n])
		labelRanges = many(&p.alloc.ranges, n)
		copy(labelRanges, rangeBuf[:n])
	}
	p.read() // {
	oBrace := p.prev
	switch p.peek().kind {
	case fpNewline, fpCBrace:
	default:
		return nil, false // single-line block, EOF, or junk: hclsyntax's business
	}
	body, ok := p.body(false, oBrace)
	if !ok {
		return nil, false
	}
	cBrace := p.prev
	if k := p.peek().kind; k != fpNewline && k != fpEOF {
		return nil, false
	}
	p.read()
	b := one(&p.alloc.blocks)
	*b = hclsyntax.Block{
		Type:            typ,
		Labels:          labels,
		Body:            body,
		TypeRange:       typeRange,
		LabelRanges:     labelRanges,
		OpenBraceRange:  oBrace,
		CloseBraceRange: cBrace,
	}
	return b, true
}

// expr parses one literal term. hclsyntax would go on to parse
// traversals, operators or a conditional after a term; the subset only
// allows what ends an expression there (a newline, EOF, a comma or a
// closing bracket), so anything else is not ok.
func (p *fastParser) expr() (hclsyntax.Expression, bool) {
	var e hclsyntax.Expression
	t := p.peek()
	switch t.kind {
	case fpString:
		s := p.read()
		// One literal part between the quotes: hclsyntax melds the
		// literal tokens of a string without templates into one. For ""
		// it inserts an empty part, placed (zero-width) at the end of the
		// closing quote.
		inner := p.prev
		if s.end.Byte-s.start.Byte > 2 {
			inner.Start.Column++
			inner.Start.Byte++
			inner.End.Column--
			inner.End.Byte--
		} else {
			inner.Start = inner.End
		}
		lit := one(&p.alloc.lits)
		*lit = hclsyntax.LiteralValueExpr{Val: cty.StringVal(s.str), SrcRange: inner}
		parts := many(&p.alloc.exprs, 1)
		parts[0] = lit
		te := one(&p.alloc.tmpls)
		*te = hclsyntax.TemplateExpr{Parts: parts, SrcRange: p.prev}
		e = te
	case fpNumber:
		n := p.read()
		lit := one(&p.alloc.lits)
		*lit = hclsyntax.LiteralValueExpr{Val: n.num, SrcRange: p.prev}
		e = lit
	case fpIdent:
		id := p.read()
		var v cty.Value
		switch p.text(id) {
		case "true":
			v = cty.True
		case "false":
			v = cty.False
		case "null":
			v = cty.NullVal(cty.DynamicPseudoType)
		default:
			return nil, false // a variable or function call
		}
		lit := one(&p.alloc.lits)
		*lit = hclsyntax.LiteralValueExpr{Val: v, SrcRange: p.prev}
		e = lit
	case fpMinus:
		// -1 is hclsyntax's unary negation of the literal 1.
		p.read()
		minus := p.prev
		if p.peek().kind != fpNumber {
			return nil, false
		}
		n := p.read()
		lit := one(&p.alloc.lits)
		*lit = hclsyntax.LiteralValueExpr{Val: n.num, SrcRange: p.prev}
		e = &hclsyntax.UnaryOpExpr{Op: hclsyntax.OpNegate, Val: lit, SrcRange: hcl.RangeBetween(minus, lit.SrcRange), SymbolRange: minus}
	case fpOBrack:
		var ok bool
		if e, ok = p.tuple(); !ok {
			return nil, false
		}
	default:
		return nil, false
	}
	switch p.peek().kind {
	case fpNewline, fpEOF, fpComma, fpCBrack:
		return e, true
	}
	return nil, false
}

// tuple mirrors parseTupleCons (newlines ignored inside the brackets).
func (p *fastParser) tuple() (hclsyntax.Expression, bool) {
	p.read() // [
	saved := p.nl
	p.nl = false
	e, ok := p.tupleRest(p.prev)
	p.nl = saved
	return e, ok
}

func (p *fastParser) tupleRest(open hcl.Range) (hclsyntax.Expression, bool) {
	var buf [8]hclsyntax.Expression
	elems := buf[:0]
	for {
		if p.peek().kind == fpCBrack {
			break
		}
		e, ok := p.expr()
		if !ok {
			return nil, false
		}
		elems = append(elems, e)
		k := p.peek().kind
		if k == fpCBrack {
			break
		}
		if k != fpComma {
			return nil, false
		}
		p.read()
	}
	p.read() // ]

	var exprs []hclsyntax.Expression // nil for [], as hclsyntax has it
	if len(elems) > 0 {
		exprs = many(&p.alloc.exprs, len(elems))
		copy(exprs, elems)
	}
	t := one(&p.alloc.tuples)
	*t = hclsyntax.TupleConsExpr{Exprs: exprs, SrcRange: hcl.RangeBetween(open, p.prev), OpenRange: open}
	return t, true
}
