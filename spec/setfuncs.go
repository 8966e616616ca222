package spec

import (
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// The set functions of go-cty's standard library are quadratic on large
// collections (toset of a tuple unifies element types pairwise; distinct
// compares every pair): 30,000 strings took minutes. The wrappers below
// give the same results in linear time for the common case, collections
// of one primitive type (strings, numbers, bools) with known, unmarked
// values, and fall back to the library for everything else.

// linear wraps fn: fast computes the result for the arguments when it can
// (ok false: use fn).
// fastType, when set, gives the result type for the arguments when it
// can (the library's type check of toset is itself quadratic).
func linear(fn function.Function, fastType func(args []cty.Value) (cty.Type, bool), fast func(args []cty.Value, ret cty.Type) (cty.Value, bool)) function.Function {
	return function.New(&function.Spec{
		Description: fn.Description(),
		Params:      fn.Params(),
		VarParam:    fn.VarParam(),
		Type: func(args []cty.Value) (cty.Type, error) {
			if fastType != nil {
				if t, ok := fastType(args); ok {
					return t, nil
				}
			}
			return fn.ReturnTypeForValues(args)
		},
		Impl: func(args []cty.Value, ret cty.Type) (cty.Value, error) {
			if v, ok := fast(args, ret); ok && v.Type().Equals(ret) {
				return v, nil
			}
			return fn.Call(args)
		},
	})
}

// primitiveElems returns a collection's elements when they are all known,
// unmarked, non-null values of one primitive type.
func primitiveElems(v cty.Value) ([]cty.Value, cty.Type, bool) {
	if v.IsNull() || !v.IsWhollyKnown() || v.ContainsMarked() {
		return nil, cty.NilType, false
	}
	t := v.Type()
	if !(t.IsTupleType() || t.IsListType() || t.IsSetType()) {
		return nil, cty.NilType, false
	}
	out := make([]cty.Value, 0, v.LengthInt())
	var et cty.Type
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || !e.Type().IsPrimitiveType() {
			return nil, cty.NilType, false
		}
		if et == cty.NilType {
			et = e.Type()
		} else if !et.Equals(e.Type()) {
			return nil, cty.NilType, false
		}
		out = append(out, e)
	}
	return out, et, et != cty.NilType
}

// key is a primitive value's identity.
func key(v cty.Value) string {
	switch v.Type() {
	case cty.String:
		return "s" + v.AsString()
	case cty.Number:
		return "n" + v.AsBigFloat().Text('g', -1)
	case cty.Bool:
		if v.True() {
			return "t"
		}
		return "f"
	}
	return "?" + v.GoString()
}

func setOf(elems []cty.Value, et cty.Type) cty.Value {
	if len(elems) == 0 {
		return cty.SetValEmpty(et)
	}
	return cty.SetVal(elems)
}

func unique(elems []cty.Value) []cty.Value {
	seen := make(map[string]bool, len(elems))
	out := make([]cty.Value, 0, len(elems))
	for _, e := range elems {
		k := key(e)
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

var (
	tosetFunc = linear(stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)), func(args []cty.Value) (cty.Type, bool) {
		if len(args) != 1 {
			return cty.NilType, false
		}
		_, et, ok := primitiveElems(args[0])
		return cty.Set(et), ok
	}, func(args []cty.Value, _ cty.Type) (cty.Value, bool) {
		elems, et, ok := primitiveElems(args[0])
		if !ok {
			return cty.NilVal, false
		}
		return setOf(unique(elems), et), true
	})
	distinctFunc = linear(stdlib.DistinctFunc, nil, func(args []cty.Value, _ cty.Type) (cty.Value, bool) {
		elems, et, ok := primitiveElems(args[0])
		if !ok || !args[0].Type().IsListType() {
			return cty.NilVal, false
		}
		u := unique(elems)
		if len(u) == 0 {
			return cty.ListValEmpty(et), true
		}
		return cty.ListVal(u), true
	})
	setUnionFunc        = linear(stdlib.SetUnionFunc, nil, setOp(func(in []int, n int) bool { return true }))
	setIntersectionFunc = linear(stdlib.SetIntersectionFunc, nil, setOp(func(in []int, n int) bool { return len(in) == n }))
	setSubtractFunc     = linear(stdlib.SetSubtractFunc, nil, setOp(func(in []int, n int) bool { return len(in) == 1 && in[0] == 0 }))
)

// setOp combines sets of one primitive type: keep says whether an element
// found in the argument sets numbered in (of n) is in the result.
func setOp(keep func(in []int, n int) bool) func(args []cty.Value, ret cty.Type) (cty.Value, bool) {
	return func(args []cty.Value, ret cty.Type) (cty.Value, bool) {
		if len(args) == 0 || !ret.IsSetType() || !ret.ElementType().IsPrimitiveType() {
			return cty.NilVal, false
		}
		et := ret.ElementType()
		where := map[string][]int{}
		var order []cty.Value
		for i, a := range args {
			if !a.Type().IsSetType() {
				return cty.NilVal, false
			}
			if a.LengthInt() == 0 && a.IsWhollyKnown() && !a.IsNull() && !a.ContainsMarked() {
				continue
			}
			elems, t, ok := primitiveElems(a)
			if !ok || !t.Equals(et) {
				return cty.NilVal, false
			}
			for _, e := range elems {
				k := key(e)
				in := where[k]
				if len(in) == 0 {
					order = append(order, e)
				}
				if len(in) == 0 || in[len(in)-1] != i {
					where[k] = append(in, i)
				}
			}
		}
		var out []cty.Value
		for _, e := range order {
			if keep(where[key(e)], len(args)) {
				out = append(out, e)
			}
		}
		return setOf(out, et), true
	}
}
