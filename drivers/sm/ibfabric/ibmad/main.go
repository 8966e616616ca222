package ibmad

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// The `fabctl ibmad` command: what drivers/sm/opensm and the testbed run
// on the subnet manager host (through sudo there, or with libumad2sim
// preloaded under ibsim), one process per read or repair:
//
//	fabctl ibmad read [--tables] [--window N] [--timeout D]   the fabric, as ibfabric's dump
//	fabctl ibmad smp < items.json                              LID-routed SMP Gets and Sets
//	fabctl ibmad restore [--sm-key K] [--dry] < items.json      port tables back to the SA's records
//
// Requests come as JSON on standard input, answers go to standard output
// as JSON (read's: ibfabric's dump, text since its format 3); an error that stops the whole command goes to standard error
// with exit status 1 (2: usage).

// Helper is the environment variable that makes a program that is not
// fabctl itself (a test binary's TestMain) run Main: the testbed sets it
// for the processes it starts as `fabctl ibmad`.
const Helper = "FABCTL_IBMAD"

// RunIfHelper runs Main and exits when the process was started as the
// MAD helper (Helper=1 and "ibmad" as the first argument); a test
// binary's TestMain calls it first.
func RunIfHelper() {
	if os.Getenv(Helper) != "1" || len(os.Args) < 2 || os.Args[1] != "ibmad" {
		return
	}
	Exit(Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
}

// openPort is OpenPort, replaceable in tests.
var openPort = OpenPort

// Main runs the command with args (after "ibmad").
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: fabctl ibmad read|smp|restore [flags]")
		return 2
	}
	fs := flag.NewFlagSet("ibmad "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o ReadOptions
	fs.BoolVar(&o.Tables, "tables", false, "read P_Key, SL2VL and VL arbitration tables too")
	fs.IntVar(&o.Window, "window", 0, fmt.Sprintf("MADs in flight (default and at most %d)", MaxWindow))
	fs.DurationVar(&o.Timeout, "timeout", 0, "one MAD's wait for its answer (default 500ms)")
	smKey := fs.Uint64("sm-key", 1, "SM_Key of the SA's trusted queries (opensm.conf sa_key; opensm's default 1)")
	dry := fs.Bool("dry", false, "restore: read the SA's records and the ports, set nothing")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	collectOnlyNearLimit()

	p, err := openPort()
	if err != nil {
		fmt.Fprintf(stderr, "fabctl ibmad: %v\n", err)
		return 1
	}
	defer p.Close()
	var out any
	switch args[0] {
	case "read":
		f, err := Read(ctx, p, o)
		if err != nil {
			fmt.Fprintf(stderr, "fabctl ibmad read: %v\n", err)
			return 1
		}
		b, err := f.MarshalDump()
		if err != nil {
			fmt.Fprintf(stderr, "fabctl ibmad read: %v\n", err)
			return 1
		}
		_, err = stdout.Write(b) // lines, the last one ended (ibfabric dump format 3)
		if err != nil {
			return 1
		}
		return 0
	case "smp":
		var items []SMPItem
		if err := decodeInput(stdin, &items); err != nil {
			fmt.Fprintf(stderr, "fabctl ibmad smp: %v\n", err)
			return 1
		}
		res, err := SMP(ctx, p, o.Options, items)
		if err != nil {
			fmt.Fprintf(stderr, "fabctl ibmad smp: %v\n", err)
			return 1
		}
		out = res
	case "restore":
		var items []RestoreItem
		if err := decodeInput(stdin, &items); err != nil {
			fmt.Fprintf(stderr, "fabctl ibmad restore: %v\n", err)
			return 1
		}
		res, err := Restore(ctx, p, o.Options, *smKey, items, *dry)
		if err != nil {
			fmt.Fprintf(stderr, "fabctl ibmad restore: %v\n", err)
			return 1
		}
		out = res
	default:
		fmt.Fprintf(stderr, "fabctl ibmad: unknown operation %q (read, smp, restore)\n", args[0])
		return 2
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}

// gcLimit is the heap size at which the command's garbage collector
// runs (collectOnlyNearLimit).
const gcLimit = 1 << 30

// collectOnlyNearLimit turns the garbage collector's pacing off for the
// command: a read lives for a fraction of a second and allocates about
// 2.5 KB per MAD (10 MB for 16 switches and 64 adapters, make bench-ib),
// and every collection cycle wakes worker threads on the cores the SMA
// answers (or ibsim) need. The runtime then
// collects only when the heap nears gcLimit (runtime/debug
// SetMemoryLimit: with GOGC off the limit is the only trigger). GOGC or
// GOMEMLIMIT set in the environment are left alone.
func collectOnlyNearLimit() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(gcLimit)
}

func decodeInput(r io.Reader, v any) error {
	dec := json.NewDecoder(io.LimitReader(r, 16<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("standard input: %w", err)
	}
	return nil
}

// SMPItem is one LID-routed SMP: a Get, or a Set of Data (hex, the
// attribute's 64 bytes) when Data is not empty.
type SMPItem struct {
	LID  int    `json:"lid"`
	Attr uint16 `json:"attr"`
	Mod  uint32 `json:"mod"`
	Data string `json:"data,omitempty"`
}

// SMPResult is an SMP's answer: the attribute as the port answered
// (after a Set: as it now is), or why not.
type SMPResult struct {
	Data  string `json:"data,omitempty"`
	Error string `json:"error,omitempty"`
}

// tableAttrs are the attributes smp and restore touch: the tables
// opensm programs and the PortInfo the testbed's faults set.
var tableAttrs = map[uint16]bool{AttrPKeyTable: true, AttrSL2VL: true, AttrVLArb: true, AttrPortInfo: true, AttrNodeInfo: true}

// SMP runs the items, in flight together.
func SMP(ctx context.Context, p Port, o Options, items []SMPItem) ([]SMPResult, error) {
	e := newEngine(p, o)
	res := make([]SMPResult, len(items))
	for i, it := range items {
		if !tableAttrs[it.Attr] || it.LID < 1 || it.LID > 0xbfff {
			res[i].Error = fmt.Sprintf("attribute 0x%04x at LID %d: not one fabctl reads or sets", it.Attr, it.LID)
			continue
		}
		r := Request{Class: ClassSMILID, Method: MethodGet, Attr: it.Attr, Mod: it.Mod, LID: it.LID}
		if it.Data != "" {
			d, err := hex.DecodeString(it.Data)
			if err != nil || len(d) > SMPData {
				res[i].Error = "data is not up to 64 bytes of hex"
				continue
			}
			r.Method, r.Data = MethodSet, d
		}
		e.do(r, func(a *Response, err error) {
			if err != nil {
				res[i].Error = err.Error()
				return
			}
			res[i].Data = hex.EncodeToString(a.Data)
		})
	}
	return res, e.run(ctx)
}

// RestoreItem is one port table to put back as the subnet manager's
// record says it (SA PKeyTableRecord, SL2VLTableRecord,
// VLArbitrationTableRecord): Attr AttrPKeyTable (Port, Block),
// AttrSL2VL (In, Out; an adapter's: Out its port, In 0) or AttrVLArb
// (Port, Block 1..4). LID is the adapter port's, or the switch's.
type RestoreItem struct {
	Attr   uint16 `json:"attr"`
	LID    int    `json:"lid"`
	Switch bool   `json:"switch"`
	Port   int    `json:"port,omitempty"`
	Block  int    `json:"block,omitempty"`
	In     int    `json:"in,omitempty"`
	Out    int    `json:"out,omitempty"`
}

// RestoreResult is what a restore did: the SM's table (hex), the port's
// before and after (hex), or why it could not.
type RestoreResult struct {
	SM     string `json:"sm,omitempty"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Restore reads each item's record from the SA, Sets the port's table to
// it with a LID-routed SMP (what opensm itself sends: osm_pkey_mgr.c
// pkey_mgr_update_pkey_entry, osm_qos.c sl2vl_update_table and
// vlarb_update_table_block) and reads the table back.
func Restore(ctx context.Context, p Port, o Options, smKey uint64, items []RestoreItem, dry bool) ([]RestoreResult, error) {
	smLID, err := smLID(ctx, p, o)
	if err != nil {
		return nil, err
	}
	res := make([]RestoreResult, len(items))
	e := newEngine(p, o)
	for i, it := range items {
		q, saAttr, keyAt, smpMod, err := it.queries()
		if err != nil {
			res[i].Error = err.Error()
			continue
		}
		e.do(Request{Class: ClassSMILID, Method: MethodGet, Attr: it.Attr, Mod: smpMod, LID: it.LID}, func(a *Response, err error) {
			if err != nil {
				res[i].Error = "read the port: " + err.Error()
				return
			}
			res[i].Before = hex.EncodeToString(a.Data[:tableSize(it.Attr)])
			e.do(Request{Class: ClassSA, Method: MethodGet, Attr: saAttr, LID: smLID, SMKey: smKey, CompMsk: compMask(it), Data: q}, func(a *Response, err error) {
				if err != nil {
					res[i].Error = "the subnet manager's record: " + err.Error()
					return
				}
				tbl, err := RecordTable(saAttr, q, a.Data, keyAt...)
				if err != nil {
					res[i].Error = "the subnet manager's record: " + err.Error()
					return
				}
				tbl = bytes.Clone(tbl) // a.Data is the engine's: the Set goes out later
				res[i].SM = hex.EncodeToString(tbl)
				if dry {
					return
				}
				e.do(Request{Class: ClassSMILID, Method: MethodSet, Attr: it.Attr, Mod: smpMod, LID: it.LID, Data: tbl}, func(a *Response, err error) {
					if err != nil {
						res[i].Error = "set the port: " + err.Error()
						return
					}
					res[i].After = hex.EncodeToString(a.Data[:tableSize(it.Attr)])
				})
			})
		})
	}
	if err := e.run(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

// tableSize is the bytes of a table attribute that hold the table: an
// SLtoVLMappingTable is 8 (ib_slvl_table_t), the others fill the SMP.
func tableSize(attr uint16) int {
	if attr == AttrSL2VL {
		return 8
	}
	return SMPData
}

// queries returns the SA record query, its attribute, the record bytes
// that must echo the query, and the SMP attribute modifier.
func (it RestoreItem) queries() (q []byte, attr uint16, keyAt []int, mod uint32, err error) {
	if it.LID < 1 || it.LID > 0xbfff || it.Port < 0 || it.Port > 254 || it.In < 0 || it.In > 254 || it.Out < 0 || it.Out > 254 {
		return nil, 0, nil, 0, fmt.Errorf("LID %d, ports %d/%d/%d out of range", it.LID, it.Port, it.In, it.Out)
	}
	switch it.Attr {
	case AttrPKeyTable:
		if it.Block < 0 || it.Block > 2047 {
			return nil, 0, nil, 0, errors.New("P_Key block out of range")
		}
		mod = uint32(it.Block)
		if it.Switch {
			mod |= uint32(it.Port) << 16
		}
		return PKeyRecordQuery(it.LID, it.Block, it.Port), AttrPKeyRecord, []int{4}, mod, nil
	case AttrSL2VL:
		if it.Switch {
			return SL2VLRecordQuery(it.LID, it.In, it.Out), AttrSL2VLRecord, []int{2, 3}, uint32(it.In)<<8 | uint32(it.Out), nil
		}
		return SL2VLRecordQuery(it.LID, 0, it.Out), AttrSL2VLRecord, nil, 0, nil
	case AttrVLArb:
		if it.Block < 1 || it.Block > 4 {
			return nil, 0, nil, 0, errors.New("VL arbitration block is not 1..4")
		}
		mod = uint32(it.Block) << 16
		if it.Switch {
			mod |= uint32(it.Port)
		}
		return VLArbRecordQuery(it.LID, it.Port, it.Block), AttrVLArbRecord, []int{3}, mod, nil
	}
	return nil, 0, nil, 0, fmt.Errorf("attribute 0x%04x is not a port table", it.Attr)
}

func compMask(it RestoreItem) uint64 {
	switch it.Attr {
	case AttrPKeyTable:
		return PKeyCompLID | PKeyCompBlock | PKeyCompPort
	case AttrSL2VL:
		if it.Switch {
			return SLVLCompLID | SLVLCompIn | SLVLCompOut
		}
		return SLVLCompLID
	default:
		return VLACompLID | VLACompPort | VLACompBlock
	}
}

// smLID reads the master SM's LID from this port's PortInfo.
func smLID(ctx context.Context, p Port, o Options) (int, error) {
	e := newEngine(p, o)
	var lid int
	var ferr error
	e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrNodeInfo, Path: []int{}}, func(r *Response, err error) {
		if err != nil {
			ferr = fmt.Errorf("NodeInfo of this port: %w", err)
			return
		}
		ni, err := DecodeNodeInfo(r.Data)
		if err != nil {
			ferr = err
			return
		}
		e.do(Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrPortInfo, Mod: uint32(ni.LocalPort), Path: []int{}}, func(r *Response, err error) {
			if err != nil {
				ferr = fmt.Errorf("PortInfo of this port: %w", err)
				return
			}
			pi, err := DecodePortInfo(r.Data)
			if err != nil {
				ferr = err
				return
			}
			lid = pi.SMLID
		})
	})
	if err := e.run(ctx); err != nil {
		return 0, err
	}
	if ferr != nil {
		return 0, ferr
	}
	if lid == 0 {
		return 0, errors.New("this port knows no subnet manager (MasterSMLID 0): is opensm running?")
	}
	return lid, nil
}
