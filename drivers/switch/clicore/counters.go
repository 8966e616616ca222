package clicore

import (
	"context"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
)

// Poll runs a platform's counter show commands on one session and
// returns their outputs in order (drivers.CounterReader).
func (k *Core) Poll(ctx context.Context, t drivers.Target, cmds []string) ([]string, error) {
	s, err := k.Dial(ctx, t)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	outs := make([]string, 0, len(cmds))
	for _, c := range cmds {
		out, err := s.Send(c)
		if err != nil {
			return nil, err
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// Count parses a counter as show commands print it: digits, with or
// without thousands separators ("1,200"); "N/A" and other text are not
// counters (ok false).
func Count(s string) (float64, bool) {
	v, err := strconv.ParseUint(strings.ReplaceAll(s, ",", ""), 10, 64)
	return float64(v), err == nil
}

// Table is one table of a show command's output in the layout most NOS
// CLIs print counters in: a header line, a line of dash runs (one run per
// column) and rows until a blank line or the next header.
type Table struct {
	Header []string
	Rows   [][]string
}

// Col is the index of the header named name (-1: none).
func (t Table) Col(name string) int {
	for i, h := range t.Header {
		if h == name {
			return i
		}
	}
	return -1
}

// Tables finds every dash-ruled table in out. Column bounds come from the
// dash runs; a header is cut at those bounds (headers may hold spaces:
// "Port Rx"), a row is split at white space when it has one field per
// column (right- or left-aligned cells) and cut at the bounds otherwise.
func Tables(out string) []Table {
	lines := strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
	var tabs []Table
	for i := 1; i < len(lines); i++ {
		spans := dashRuns(lines[i])
		if spans == nil {
			continue
		}
		t := Table{Header: cut(lines[i-1], spans)}
		for j := i + 1; j < len(lines); j++ {
			l := lines[j]
			if strings.TrimSpace(l) == "" {
				if len(t.Rows) == 0 {
					continue // a blank line under the rule (wredstat's doc example)
				}
				i = j
				break
			}
			if j+1 < len(lines) && dashRuns(lines[j+1]) != nil {
				i = j
				break
			}
			f := strings.Fields(l)
			if len(f) != len(spans) {
				f = cut(l, spans)
			}
			t.Rows = append(t.Rows, f)
			i = j
		}
		tabs = append(tabs, t)
	}
	return tabs
}

// dashRuns are the [start, end) columns of the dash runs of a rule line
// (nil: not a rule line).
func dashRuns(l string) [][2]int {
	l = strings.TrimRight(l, " \t")
	if l == "" || strings.Trim(l, "- ") != "" || !strings.Contains(l, "--") {
		return nil
	}
	var runs [][2]int
	for i := 0; i < len(l); {
		if l[i] != '-' {
			i++
			continue
		}
		j := i
		for j < len(l) && l[j] == '-' {
			j++
		}
		runs = append(runs, [2]int{i, j})
		i = j
	}
	return runs
}

// cut splits l at the rule's column bounds: column k spans from the end
// of run k-1 to the end of run k (text sticking out on the right of the
// last run belongs to the last column).
func cut(l string, spans [][2]int) []string {
	out := make([]string, len(spans))
	prev := 0
	for k, s := range spans {
		end := s[1]
		if k == len(spans)-1 || end > len(l) {
			end = len(l)
		}
		if prev < len(l) && prev < end {
			out[k] = strings.TrimSpace(l[prev:end])
		}
		prev = s[1]
	}
	return out
}
