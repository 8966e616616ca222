package spec

import (
	"runtime"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Streaming load of large specs: parse chunk by chunk and decode each
// chunk's blocks as soon as it is parsed, dropping its syntax tree.
//
// Why: the syntax tree of a generated pod is ~25x its source (hclsyntax's
// nodes carry three 64-byte ranges per attribute): 185 MB for the 8.4 MB
// benchmark pod, against a 73 MB model. Parsing everything before decoding
// kept the whole tree and the growing model alive together, and with Go's
// default GC target load+lint peaked at ~360 MB of RSS (~540 MB before the
// fast parser). Streaming keeps only a few chunk trees alive at a time:
// ~160 MB (internal/fabgen/cmd/podbench). Decoding on one core also
// overlaps with parsing on the others.
//
// The result must be exactly what the whole-file loader (loader.load)
// gives, diagnostics included, in the same order. The loader decodes by
// type: variables, locals, fabric, credentials and classes, then all
// switches, hosts, links, validate blocks and infiniband, then resolves.
// The stream keeps that:
//
//   - Chunks whose top-level lines name anything but switch, host, link,
//     validate or infiniband blocks (the splitter's prediction), and small
//     files, are parsed first and their global blocks decoded in the
//     loader's order.
//   - Then every unit, in file order, has its switch, host and link blocks
//     decoded, each type's diagnostics into a bucket of its own; the
//     buckets are appended in type order afterwards. Decoding one of these
//     reads only its own block, the fabric and the variables. Errors in
//     the global blocks that do not stop load (a bad class attribute) are
//     fine: they precede all of these in either order.
//   - Validate and infiniband blocks are few: they are kept and decoded
//     after the stream, then everything is resolved as in load.
//
// Whenever the result could differ, the stream gives up and the caller
// loads the whole-file way from scratch: any parse diagnostic, a top-level
// item Content(topSchema) would report, an error that stops load in the
// global blocks (it stops before having seen later chunks' top-level items),
// a global block in a chunk predicted to have none, or a JSON file. Such
// specs get the whole-file path's output, at its cost.

// unit is one piece of a streamed spec: a chunk of a large file, or a
// whole small file.
type unit struct {
	name  string
	src   []byte
	start hcl.Pos
	whole bool // a whole file, parsed in one piece as before
	early bool // parsed before the stream: small files and chunks with global blocks

	file   *hcl.File // whole files
	body   *hclsyntax.Body
	diags  hcl.Diagnostics
	blocks []*hcl.Block
	ready  chan struct{} // closed when a streamed unit is parsed
	topOK  bool          // topBlocks held (streamed units, set by the worker)
	alloc  *fpAlloc      // the worker's slabs the tree was carved from (nil: its own)

	// decoded: the worker decoded the unit's switch, host and link blocks
	// (see decode); blocks then holds only the others.
	decoded                     bool
	switches                    []*Switch
	hosts                       []*Host
	links                       []*Link
	swDiags, hostDiags, lkDiags hcl.Diagnostics
}

// globalTypes are the top-level blocks everything else depends on.
func isGlobalType(t string) bool {
	switch t {
	case "variable", "locals", "fabric", "class", "credentials":
		return true
	}
	return false
}

// loadStreamed loads files into s the streaming way. ok=false: it does not
// apply, or gave up; s is then untouched but for Files, which the caller
// replaces.
func loadStreamed(files []File, opts LoadOptions, s *Spec) (diags hcl.Diagnostics, ok bool) {
	var units []*unit
	chunked := false
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".json") {
			return nil, false
		}
		if len(f.Data) >= chunkMinFile {
			if chunks := splitTopLevel(f.Data); len(chunks) >= 2 {
				chunked = true
				for _, ch := range chunks {
					units = append(units, &unit{name: f.Name, src: f.Data[ch.start.Byte:ch.end], start: ch.start, early: ch.globals})
				}
				s.Files[f.Name] = &hcl.File{Body: hcl.EmptyBody(), Bytes: f.Data, Nav: lineNav(f.Data)}
				continue
			}
		}
		units = append(units, &unit{name: f.Name, src: f.Data, start: hcl.InitialPos, whole: true, early: true})
	}
	if !chunked {
		return nil, false // nothing large: the whole-file path is as good
	}

	// Phase 1: the early units, and the global blocks.
	byType := map[string][]*hcl.Block{}
	for _, u := range units {
		if !u.early {
			continue
		}
		if u.whole {
			u.file, u.diags = parseWhole(u.src, u.name)
			u.body = u.file.Body.(*hclsyntax.Body)
			s.Files[u.name] = u.file
		} else {
			u.body, u.diags = parseChunk(u.src, u.name, u.start)
		}
		if len(u.diags) > 0 || !u.topBlocks() {
			return nil, false
		}
		for _, b := range u.blocks {
			if isGlobalType(b.Type) {
				byType[b.Type] = append(byType[b.Type], b)
			}
		}
	}
	l := &loader{spec: s, opts: opts}
	for _, u := range units {
		if u.early && instrumentFor(u.src, u.body, l.budget()).HasErrors() {
			return nil, false // the whole-file path reports them
		}
	}
	if !l.globals(byType) {
		return nil, false
	}

	// Phase 2: the stream. Workers parse the other units ahead of the
	// decoder, at most lookahead units, so that few trees are alive.
	workers := runtime.GOMAXPROCS(0)
	lookahead := 2*workers + 2
	sem := make(chan struct{}, lookahead)
	quit := make(chan struct{})
	jobs := make(chan *unit)
	for _, u := range units {
		if !u.early {
			u.ready = make(chan struct{})
		}
	}
	var wg sync.WaitGroup
	go func() {
		defer close(jobs)
		for _, u := range units {
			if u.early {
				continue
			}
			select {
			case sem <- struct{}{}:
			case <-quit:
				return
			}
			select {
			case jobs <- u:
			case <-quit:
				return
			}
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker decodes with a loader of its own: decoding a
			// switch, host or link block reads only the block, the
			// fabric, the options and the variables (l.base), and writes
			// only the loader's diagnostics and schema cache.
			wl := &loader{spec: s, opts: opts, base: l.base, bud: l.budget()}
			alloc := &fpAlloc{}
			for u := range jobs {
				u.alloc, wl.alloc = alloc, alloc
				u.body, u.diags = parseChunkWith(u.src, u.name, u.start, alloc)
				u.diags = append(u.diags, instrumentFor(u.src, u.body, wl.budget())...)
				if len(u.diags) == 0 && u.topBlocks() {
					u.topOK = true
					u.decode(wl)
				}
				// When the unit's tree is dead (decoded, no block kept,
				// no diagnostic that could point into it), its nodes are
				// reused for the next unit; else they are left to it.
				dead := u.decoded && u.body == nil && len(u.swDiags)+len(u.hostDiags)+len(u.lkDiags) == 0
				u.alloc = nil
				close(u.ready)
				if dead {
					alloc.reset()
				} else {
					alloc = &fpAlloc{}
				}
			}
		}()
	}
	defer wg.Wait()
	giveUp := func() (hcl.Diagnostics, bool) {
		close(quit)
		return nil, false
	}

	var switchDiags, hostDiags, linkDiags hcl.Diagnostics
	var validations, ibs []*hcl.Block
	for _, u := range units {
		if !u.early {
			<-u.ready
			if !u.topOK {
				return giveUp()
			}
		}
		if u.decoded {
			s.Switches = append(s.Switches, u.switches...)
			s.Hosts = append(s.Hosts, u.hosts...)
			s.Links = append(s.Links, u.links...)
			switchDiags = append(switchDiags, u.swDiags...)
			hostDiags = append(hostDiags, u.hostDiags...)
			linkDiags = append(linkDiags, u.lkDiags...)
		}
		for _, b := range u.blocks {
			switch b.Type {
			case "switch":
				l.decodeInto(&switchDiags, l.switchBlocks, b)
			case "host":
				l.decodeInto(&hostDiags, l.hostBlocks, b)
			case "link":
				l.decodeInto(&linkDiags, l.linkBlocks, b)
			case "validate":
				validations = append(validations, b)
			case "infiniband":
				ibs = append(ibs, b)
			default:
				if !u.early {
					return giveUp() // a global block the splitter did not see
				}
			}
		}
		// The model keeps ranges and strings, not syntax: let the tree go.
		u.body, u.blocks = nil, nil
		if !u.early {
			<-sem
		}
	}
	l.diags = append(append(append(l.diags, switchDiags...), hostDiags...), linkDiags...)
	l.late(validations, ibs)
	l.resolve()
	return append(l.diags, l.bud.exhaustedError(l.diags)...), true
}

// decode decodes the unit's switch, host and link blocks with wl, in the
// parse worker, when every one of them is a plain block (no for_each):
// what the stream's decoder would do with them, diagnostics included, in
// the same order per type. It keeps the other blocks (validate,
// infiniband, or a global block the stream gives up on) in u.blocks and
// lets the tree go unless they need it.
func (u *unit) decode(wl *loader) {
	rest := 0
	for _, b := range u.blocks {
		switch b.Type {
		case "switch", "host", "link":
			if _, ok := wl.plainInstance(b); !ok {
				return // for_each: decoded in order by the stream
			}
		default:
			rest++
		}
	}
	var others []*hcl.Block
	if rest > 0 {
		others = make([]*hcl.Block, 0, rest)
	}
	for _, b := range u.blocks {
		switch b.Type {
		case "switch":
			in, _ := wl.plainInstance(b)
			wl.diags = u.swDiags
			if sw := wl.switchBlock(in); sw != nil {
				u.switches = append(u.switches, sw)
			}
			u.swDiags = wl.diags
		case "host":
			in, _ := wl.plainInstance(b)
			wl.diags = u.hostDiags
			if h := wl.host(in); h != nil {
				u.hosts = append(u.hosts, h)
			}
			u.hostDiags = wl.diags
		case "link":
			if u.links == nil {
				u.links = make([]*Link, 0, len(u.blocks)-rest)
			}
			in, _ := wl.plainInstance(b)
			wl.diags = u.lkDiags
			if lk := wl.link(in); lk != nil {
				u.links = append(u.links, lk)
			}
			u.lkDiags = wl.diags
		default:
			others = append(others, b)
		}
	}
	wl.diags = nil
	u.decoded = true
	u.blocks = others
	if rest == 0 {
		u.body = nil
	}
}

// decodeInto runs decode on b with its diagnostics going to bucket.
func (l *loader) decodeInto(bucket *hcl.Diagnostics, decode func(*hcl.Block), b *hcl.Block) {
	saved := l.diags
	l.diags = *bucket
	decode(b)
	*bucket = l.diags
	l.diags = saved
}

// topBlocks checks that Content(topSchema) on the unit's body would report
// nothing (no top-level attribute, every block of a known type with its
// labels) and sets u.blocks to what it would return.
func (u *unit) topBlocks() bool {
	if len(u.body.Attributes) > 0 {
		return false
	}
	for _, b := range u.body.Blocks {
		known := false
		for _, bs := range topSchema.Blocks {
			if bs.Type == b.Type {
				known = len(b.Labels) == len(bs.LabelNames)
				break
			}
		}
		if !known {
			return false
		}
	}
	u.blocks = hclBlocks(u.body.Blocks, u.alloc)
	return true
}
