package spec

import (
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"strings"

	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// secretMark marks a value produced by env() or file(): a reference to a
// secret, never the secret itself. Only credentials attributes accept it.
type secretMark struct{}

func secretRefFunc(kind string) function.Function {
	return function.New(&function.Spec{
		Description: fmt.Sprintf("A reference to a secret read from %s at run time; usable only in credentials blocks.", map[string]string{"env": "an environment variable", "file": "a file"}[kind]),
		Params:      []function.Parameter{{Name: "name", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := strings.TrimSpace(args[0].AsString())
			if name == "" {
				return cty.NilVal, fmt.Errorf("%s() needs a non-empty name", kind)
			}
			return cty.StringVal(kind + "\x00" + name).Mark(secretMark{}), nil
		},
	})
}

// cidrHostFunc is cidrhost(prefix, n): the n-th address of a prefix
// (negative n counts from the end). go-cty's stdlib has no network
// functions and Terraform's live in its internal tree, so fabctl carries
// these two small ones, written on net/netip.
var cidrHostFunc = function.New(&function.Spec{
	Description: "The address number n of an IP prefix, e.g. cidrhost(\"10.0.0.0/24\", 5) = \"10.0.0.5\".",
	Params: []function.Parameter{
		{Name: "prefix", Type: cty.String},
		{Name: "hostnum", Type: cty.Number},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		p, err := netip.ParsePrefix(args[0].AsString())
		if err != nil {
			return cty.NilVal, fmt.Errorf("invalid prefix: %w", err)
		}
		n, acc := args[1].AsBigFloat().Int64()
		if acc != big.Exact {
			return cty.NilVal, fmt.Errorf("hostnum must be a whole number")
		}
		a, err := addrOffset(p.Masked(), n)
		if err != nil {
			return cty.NilVal, err
		}
		return cty.StringVal(a.String()), nil
	},
})

// cidrSubnetFunc is cidrsubnet(prefix, newbits, netnum).
var cidrSubnetFunc = function.New(&function.Spec{
	Description: "Subnet number netnum of prefix extended by newbits, e.g. cidrsubnet(\"10.0.0.0/16\", 15, 3) = \"10.0.0.6/31\".",
	Params: []function.Parameter{
		{Name: "prefix", Type: cty.String},
		{Name: "newbits", Type: cty.Number},
		{Name: "netnum", Type: cty.Number},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		p, err := netip.ParsePrefix(args[0].AsString())
		if err != nil {
			return cty.NilVal, fmt.Errorf("invalid prefix: %w", err)
		}
		nb, _ := args[1].AsBigFloat().Int64()
		num, _ := args[2].AsBigFloat().Int64()
		bits := p.Bits() + int(nb)
		if nb < 0 || bits > p.Addr().BitLen() {
			return cty.NilVal, fmt.Errorf("cannot extend /%d by %d bits", p.Bits(), nb)
		}
		if nb < 63 && (num < 0 || num >= int64(1)<<nb) {
			return cty.NilVal, fmt.Errorf("netnum %d does not fit in %d bits", num, nb)
		}
		hostBits := p.Addr().BitLen() - bits
		base := p.Masked().Addr()
		a := base
		if num != 0 {
			// offset = num << hostBits, done in big arithmetic.
			off := new(big.Int).Lsh(big.NewInt(num), uint(hostBits))
			a, err = addBig(base, off)
			if err != nil {
				return cty.NilVal, err
			}
		}
		return cty.StringVal(netip.PrefixFrom(a, bits).String()), nil
	},
})

func addrOffset(p netip.Prefix, n int64) (netip.Addr, error) {
	size := new(big.Int).Lsh(big.NewInt(1), uint(p.Addr().BitLen()-p.Bits()))
	off := big.NewInt(n)
	if n < 0 {
		off.Add(off, size)
	}
	if off.Sign() < 0 || off.Cmp(size) >= 0 {
		return netip.Addr{}, fmt.Errorf("prefix %s has no host number %d", p, n)
	}
	return addBig(p.Addr(), off)
}

func addBig(a netip.Addr, off *big.Int) (netip.Addr, error) {
	v := new(big.Int).SetBytes(a.AsSlice())
	v.Add(v, off)
	b := v.Bytes()
	n := len(a.AsSlice())
	if len(b) > n {
		return netip.Addr{}, fmt.Errorf("address overflow")
	}
	buf := make([]byte, n)
	copy(buf[n-len(b):], b)
	out, _ := netip.AddrFromSlice(buf)
	return out, nil
}

// Functions returns the function table a spec can call: go-cty's standard
// library under Terraform's names, try/can, cidrhost/cidrsubnet, and the
// secret references env()/file().
func Functions() map[string]function.Function {
	return map[string]function.Function{
		"abs":             stdlib.AbsoluteFunc,
		"alltrue":         allTrueFunc,
		"ceil":            ceilFunc,
		"chomp":           stdlib.ChompFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"cidrhost":        cidrHostFunc,
		"cidrsubnet":      cidrSubnetFunc,
		"coalesce":        stdlib.CoalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"distinct":        distinctFunc,
		"element":         stdlib.ElementFunc,
		"env":             secretRefFunc("env"),
		"file":            secretRefFunc("file"),
		"flatten":         stdlib.FlattenFunc,
		"floor":           floorFunc,
		"format":          stdlib.FormatFunc,
		"formatlist":      stdlib.FormatListFunc,
		"indent":          stdlib.IndentFunc,
		"index":           stdlib.IndexFunc,
		"join":            stdlib.JoinFunc,
		"jsondecode":      stdlib.JSONDecodeFunc,
		"jsonencode":      stdlib.JSONEncodeFunc,
		"keys":            stdlib.KeysFunc,
		"length":          stdlib.LengthFunc,
		"log":             stdlib.LogFunc,
		"lookup":          stdlib.LookupFunc,
		"lower":           stdlib.LowerFunc,
		"max":             stdlib.MaxFunc,
		"merge":           stdlib.MergeFunc,
		"min":             stdlib.MinFunc,
		"parseint":        stdlib.ParseIntFunc,
		"pow":             stdlib.PowFunc,
		"range":           rangeFunc,
		"regex":           stdlib.RegexFunc,
		"regexall":        stdlib.RegexAllFunc,
		"replace":         stdlib.ReplaceFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": setIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"setsubtract":     setSubtractFunc,
		"setunion":        setUnionFunc,
		"signum":          stdlib.SignumFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"split":           stdlib.SplitFunc,
		"strlen":          stdlib.StrlenFunc,
		"strrev":          stdlib.ReverseFunc,
		"substr":          stdlib.SubstrFunc,
		"title":           stdlib.TitleFunc,
		"tobool":          stdlib.MakeToFunc(cty.Bool),
		"tolist":          stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"tomap":           stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"tonumber":        stdlib.MakeToFunc(cty.Number),
		"toset":           tosetFunc,
		"tostring":        stdlib.MakeToFunc(cty.String),
		"trim":            stdlib.TrimFunc,
		"trimprefix":      stdlib.TrimPrefixFunc,
		"trimspace":       stdlib.TrimSpaceFunc,
		"trimsuffix":      stdlib.TrimSuffixFunc,
		"try":             tryfunc.TryFunc,
		"can":             tryfunc.CanFunc,
		"upper":           stdlib.UpperFunc,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,
	}
}

var allTrueFunc = function.New(&function.Spec{
	Description: "True when every element of the list is true.",
	Params:      []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
	Type:        function.StaticReturnType(cty.Bool),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		for it := args[0].ElementIterator(); it.Next(); {
			_, v := it.Element()
			if v.IsNull() || !v.True() {
				return cty.False, nil
			}
		}
		return cty.True, nil
	},
})

// maxRange bounds range(): go-cty's own stops at 1,024 values, too few for
// a fabric of thousands of NICs written with for_each.
const maxRange = 1 << 20

// rangeFunc is range(end), range(start, end) or range(start, end, step),
// as go-cty's, with a limit that fits large fabrics.
var rangeFunc = function.New(&function.Spec{
	Description: "A list of numbers from start (default 0) up to but not including end, by step (default 1 or -1); at most 1,048,576 values.",
	VarParam:    &function.Parameter{Name: "params", Type: cty.Number},
	Type:        function.StaticReturnType(cty.List(cty.Number)),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		var start, end, step float64
		num := func(v cty.Value) float64 { f, _ := v.AsBigFloat().Float64(); return f }
		switch len(args) {
		case 1:
			end = num(args[0])
			step = 1
			if end < 0 {
				step = -1
			}
		case 2, 3:
			start, end = num(args[0]), num(args[1])
			step = 1
			if end < start {
				step = -1
			}
			if len(args) == 3 {
				step = num(args[2])
			}
		default:
			return cty.NilVal, fmt.Errorf("range takes one to three arguments: range(end), range(start, end) or range(start, end, step)")
		}
		if step == 0 {
			return cty.NilVal, fmt.Errorf("step must not be zero")
		}
		if (step > 0 && end < start) || (step < 0 && end > start) {
			return cty.NilVal, fmt.Errorf("step %v never reaches %v from %v", step, end, start)
		}
		n := (end - start) / step
		if n > maxRange {
			return cty.NilVal, fmt.Errorf("range would make more than %d values", maxRange)
		}
		var out []cty.Value
		for v := start; (step > 0 && v < end) || (step < 0 && v > end); v += step {
			out = append(out, numberVal(v))
		}
		if len(out) == 0 {
			return cty.ListValEmpty(cty.Number), nil
		}
		return cty.ListVal(out), nil
	},
})

// numberVal returns a whole number as a 64-bit-precision cty number.
// cty's own floor/ceil keep the 512-bit precision of a preceding division,
// and turning such a number into a string (every "${n}" in an interface
// name) costs microseconds; a fabric spec interpolates tens of thousands.
func numberVal(f float64) cty.Value {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return cty.NumberIntVal(int64(f))
	}
	return cty.NumberFloatVal(f)
}

func roundFunc(desc string, round func(*big.Float) *big.Int) function.Function {
	return function.New(&function.Spec{
		Description: desc,
		Params:      []function.Parameter{{Name: "num", Type: cty.Number}},
		Type:        function.StaticReturnType(cty.Number),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			f := args[0].AsBigFloat()
			if f.IsInf() {
				return args[0], nil
			}
			i := round(f)
			if i.IsInt64() {
				return cty.NumberIntVal(i.Int64()), nil
			}
			return cty.NumberVal(new(big.Float).SetInt(i)), nil
		},
	})
}

var floorFunc = roundFunc("The greatest whole number less than or equal to num.", func(f *big.Float) *big.Int {
	i, acc := f.Int(nil)
	if acc == big.Above { // truncated a negative number upwards
		i.Sub(i, big.NewInt(1))
	}
	return i
})

var ceilFunc = roundFunc("The smallest whole number greater than or equal to num.", func(f *big.Float) *big.Int {
	i, acc := f.Int(nil)
	if acc == big.Below { // truncated a positive number downwards
		i.Add(i, big.NewInt(1))
	}
	return i
})
