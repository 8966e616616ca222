package clicore

import "strings"

// CutTable finds the dash-ruled table of out whose header begins with
// the column first and cuts every row at the rule's column bounds (never
// at white space: a cell may hold spaces, another be empty). Rows end at
// a blank line or at a rule of one dash run (sonic-utilities' lldpshow
// closes its table with 50 dashes and a total). ok is false when out has
// no such table.
func CutTable(out, first string) (t Table, ok bool) {
	lines := strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
	for i := 0; i+1 < len(lines); i++ {
		f := strings.Fields(lines[i])
		if len(f) == 0 || f[0] != first {
			continue
		}
		spans := dashRuns(lines[i+1])
		if spans == nil {
			continue
		}
		t = Table{Header: cut(lines[i], spans)}
		for _, l := range lines[i+2:] {
			if strings.TrimSpace(l) == "" {
				break
			}
			if r := dashRuns(l); r != nil && len(r) == 1 && len(spans) > 1 {
				break
			}
			t.Rows = append(t.Rows, cut(l, spans))
		}
		return t, true
	}
	return Table{}, false
}
