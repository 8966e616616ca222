package opensm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/intent"
)

// The readers below turn opensm's files into normalised state: the same
// paths and values intent.SubnetManager.Flatten produces, so a file
// fabctl wrote reads back equal to the spec, and a file written by hand
// shows exactly what differs (not whitespace, comments, order or number
// spelling). They never fail: what they cannot read becomes an
// ".../unparsed/<n>" setting holding the text, which the plan shows as
// something the next write removes. They are hand-written because no Go
// library reads opensm's formats.

// parsePartitions reads partitions.conf the way opensm/osm_prtn_config.c
// does: '#' starts a comment on every line, a statement runs to ';'
// (across lines), its header "name=pkey, flag, flag=value" ends at the
// first ':', members are comma-separated "guid[=full|limited|both]" or
// keywords, and a line starting "mgid=" inside a statement defines a
// multicast group. Statements with the same P_Key merge under the first
// one's name, as in opensm.
func parsePartitions(text string) intent.State {
	st := intent.State{}
	type part struct {
		name    string
		members map[string]string
	}
	byPKey := map[string]*part{}
	unparsed := 0
	bad := func(what string) {
		unparsed++
		st[fmt.Sprintf("%sunparsed/%d", intent.PathPartitions, unparsed)] = strings.Join(strings.Fields(what), " ")
	}
	var stmt []string // lines of the statement being read
	flush := func() {
		lines := stmt
		stmt = nil
		joined := strings.Join(lines, "\n")
		if strings.TrimSpace(joined) == "" {
			return
		}
		hdr, body, ok := strings.Cut(joined, ":")
		if !ok {
			bad(joined)
			return
		}
		fields := strings.Split(hdr, ",")
		name, id, hasID := strings.Cut(strings.TrimSpace(fields[0]), "=")
		name, id = strings.TrimSpace(name), strings.TrimSpace(id)
		if !hasID && name != "" && name[0] >= '0' && name[0] <= '9' {
			id, name = name, ""
		}
		pkey := "auto"
		if id != "" {
			v, err := strconv.ParseUint(id, 0, 16)
			if err != nil {
				bad(joined)
				return
			}
			pkey = intent.PKeyString(int(v))
		}
		if name == "" {
			name = pkey
		}
		p := byPKey[pkey]
		if p == nil || pkey == "auto" {
			p = &part{name: name, members: map[string]string{}}
			byPKey[pkey] = p
		}
		pre := intent.PathPartitions + p.name + "/"
		st[pre+"pkey"] = pkey
		if _, ok := st[pre+"ipoib"]; !ok {
			st[pre+"ipoib"] = "false"
		}
		defMember := "limited"
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch k {
			case "":
			case "ipoib":
				st[pre+"ipoib"] = "true"
			case "mtu":
				st[pre+"mtu"] = mtuValue(v)
			case "rate":
				st[pre+"rate"] = rateValue(v)
			case "sl":
				// SL 0 is opensm's default; the spec's state leaves it out.
				if sl := numValue(v); sl != "0" {
					st[pre+"sl"] = sl
				}
			case "defmember":
				defMember = membership(v, "limited")
			default:
				st[pre+"flag/"+k] = v
			}
		}
		for _, line := range strings.Split(body, "\n") {
			t := strings.TrimSpace(line)
			if strings.HasPrefix(t, "mgid") {
				if k, rest, _ := strings.Cut(t, "="); strings.TrimSpace(k) == "mgid" {
					gid, flags, _ := strings.Cut(rest, ",")
					st[pre+"mgid/"+strings.TrimSpace(gid)] = strings.Join(strings.Fields(flags), "")
					continue
				}
			}
			for _, tok := range strings.Split(t, ",") {
				tok = strings.TrimSpace(tok)
				if tok == "" {
					continue
				}
				id, flag, hasFlag := strings.Cut(tok, "=")
				id = strings.TrimSpace(id)
				m := defMember
				if hasFlag {
					m = membership(strings.TrimSpace(flag), "limited")
				}
				key := memberID(id)
				if key == "" {
					bad(tok)
					continue
				}
				if id == "NONE" {
					continue
				}
				if have := p.members[key]; have != "" && have != m {
					m = mergeMembership(have, m)
				}
				p.members[key] = m
				st[pre+"member/"+key] = m
			}
		}
	}
	for _, raw := range strings.Split(text, "\n") {
		line, _, _ := strings.Cut(raw, "#")
		for {
			before, after, found := strings.Cut(line, ";")
			stmt = append(stmt, before)
			if !found {
				break
			}
			flush()
			line = after
		}
	}
	flush() // a statement without ';' at the end of the file: opensm still applies what it parsed
	return st
}

// memberID normalises a member: a port GUID as "0x" + 16 hex digits, or
// an opensm keyword; "" when it is neither (opensm: "bad PortGUID").
func memberID(s string) string {
	switch s {
	case "ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF", "NONE":
		return s
	}
	v, err := strconv.ParseUint(s, 0, 64) // strtoull(name, &end, 0) in opensm
	if err != nil || v == 0 {
		return ""
	}
	return fmt.Sprintf("0x%016x", v)
}

// membership reads a membership flag; opensm compares prefixes.
func membership(v, def string) string {
	switch {
	case v == "":
		return def
	case strings.HasPrefix("full", v):
		return "full"
	case strings.HasPrefix("both", v):
		return "both"
	}
	return "limited" // opensm: anything else is limited
}

func mergeMembership(a, b string) string {
	if a == "both" || b == "both" || a != b {
		return "full"
	}
	return a
}

func numValue(v string) string {
	n, err := strconv.ParseUint(v, 0, 32)
	if err != nil {
		return v
	}
	return strconv.FormatUint(n, 10)
}

// mtuValue turns an IBTA MTU code into bytes ("5" -> "4096").
func mtuValue(v string) string {
	n, err := strconv.ParseUint(v, 0, 8)
	if err == nil {
		if b, ok := intent.IBMTUBytes(int(n)); ok {
			return strconv.Itoa(b)
		}
	}
	return "code " + v
}

// rateValue turns an IBTA rate code into a rate ("21" -> "400G").
func rateValue(v string) string {
	n, err := strconv.ParseUint(v, 0, 8)
	if err == nil {
		if r, ok := intent.IBRate(int(n)); ok {
			return r.String()
		}
	}
	return "code " + v
}

// pkeyList normalises a P_Key list or range list ("0x8001, 0x10-0x20").
func pkeyList(v string) string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(item, "-")
		a, err1 := strconv.ParseUint(strings.TrimSpace(lo), 0, 16)
		if !isRange {
			if err1 != nil {
				out = append(out, item)
				continue
			}
			out = append(out, intent.PKeyString(int(a)))
			continue
		}
		b, err2 := strconv.ParseUint(strings.TrimSpace(hi), 0, 16)
		if err1 != nil || err2 != nil {
			out = append(out, item)
			continue
		}
		out = append(out, intent.PKeyString(int(a))+"-"+intent.PKeyString(int(b)))
	}
	return strings.Join(out, ",")
}

// parseQoSPolicy reads qos-policy.conf (linux-rdma/opensm
// doc/QoS_management_in_OpenSM.txt): keywords start their line, sections
// and subsections close with end-<keyword>, fields are "key: value".
// qos-levels and qos-match-rules become settings fabctl compares; the
// other sections (port-groups, qos-setup, qos-ulps), which fabctl does not
// write, become one setting each holding their normalised text.
func parseQoSPolicy(text string) intent.State {
	st := intent.State{}
	section, sub := "", ""
	var fields [][2]string // current qos-level or qos-match-rule
	var sectionText []string
	rules, unparsed := 0, 0
	bad := func(l string) {
		unparsed++
		st[fmt.Sprintf("%sunparsed/%d", intent.PathQoSPolicy, unparsed)] = l
	}
	for _, raw := range strings.Split(text, "\n") {
		line, _, _ := strings.Cut(raw, "#")
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		switch {
		case section == "" && (line == "qos-levels" || line == "qos-match-rules" || line == "port-groups" || line == "qos-setup" || line == "qos-ulps"):
			section, sectionText = line, nil
		case section != "" && sub == "" && line == "end-"+section:
			if section != "qos-levels" && section != "qos-match-rules" {
				st[intent.PathQoSPolicy+"section/"+section] = strings.Join(sectionText, "; ")
			}
			section = ""
		case section == "qos-levels" && sub == "" && line == "qos-level",
			section == "qos-match-rules" && sub == "" && line == "qos-match-rule":
			sub, fields = line, nil
		case sub != "" && line == "end-"+sub:
			if sub == "qos-level" {
				putLevel(st, fields, bad)
			} else {
				rules++
				putRule(st, rules, fields)
			}
			sub = ""
		case sub != "":
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				bad(line)
				continue
			}
			fields = append(fields, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
		case section != "":
			sectionText = append(sectionText, line)
		default:
			bad(line)
		}
	}
	if section != "" {
		bad("unterminated " + section)
	}
	return st
}

func putLevel(st intent.State, fields [][2]string, bad func(string)) {
	name := ""
	for _, f := range fields {
		if f[0] == "name" {
			name = f[1]
		}
	}
	if name == "" {
		bad("qos-level without a name")
		return
	}
	pre := intent.PathQoSPolicy + "level/" + name + "/"
	for _, f := range fields {
		switch f[0] {
		case "name", "use":
		case "sl", "packet-life":
			st[pre+f[0]] = numValue(f[1])
		case "mtu-limit":
			st[pre+f[0]] = mtuValue(f[1])
		case "rate-limit":
			st[pre+f[0]] = rateValue(f[1])
		case "pkey":
			st[pre+f[0]] = pkeyList(f[1])
		default:
			st[pre+f[0]] = f[1]
		}
	}
}

// putRule stores a match rule as its criteria, key=value in key order
// (the "use" comment left out), the form intent.MatchRuleString builds.
func putRule(st intent.State, n int, fields [][2]string) {
	var crit []string
	for _, f := range fields {
		if f[0] == "use" {
			continue
		}
		v := f[1]
		if f[0] == "pkey" {
			v = pkeyList(v)
		}
		crit = append(crit, f[0]+"="+strings.ReplaceAll(v, " ", ""))
	}
	sort.Strings(crit)
	st[intent.PathQoSPolicy+"match/"+strconv.Itoa(n)] = strings.Join(crit, " ")
}

// parseOpenSMConf reads opensm.conf options as opensm's
// osm_subn_parse_conf_file does: a line starting with '#' is a comment,
// the option is the first word and its value the second, a later line
// wins, and "(null)" means unset (what `opensm -c` writes for unset
// strings).
func parseOpenSMConf(text string) map[string]string {
	opts := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		k, v, ok := optionLine(l)
		if !ok {
			continue
		}
		if v == "(null)" || v == "" {
			delete(opts, k)
			continue
		}
		opts[k] = v
	}
	return opts
}

// optionLine splits an opensm.conf line into option and value.
func optionLine(l string) (key, value string, ok bool) {
	t := strings.TrimSpace(l)
	if t == "" || t[0] == '#' {
		return "", "", false
	}
	f := strings.Fields(t)
	if len(f) == 1 {
		return f[0], "", true
	}
	return f[0], f[1], true
}

// openSMState is the managed options of a parsed opensm.conf as state,
// values normalised the way Flatten writes them.
func openSMState(opts map[string]string, managed []string) intent.State {
	st := intent.State{}
	for _, o := range managed {
		v, ok := opts[o]
		if !ok {
			continue
		}
		switch {
		case o == "qos":
			// opts_parse_boolean: "TRUE" is true, anything else false.
			if v == "TRUE" {
				v = "TRUE"
			} else {
				v = "FALSE"
			}
		case strings.HasSuffix(o, "sl2vl"):
			v = strings.Join(splitTrim(v, ","), ",")
		case strings.Contains(o, "vlarb"):
			var parts []string
			for _, e := range splitTrim(v, ",") {
				vl, w, _ := strings.Cut(e, ":")
				parts = append(parts, numValue(strings.TrimSpace(vl))+":"+numValue(strings.TrimSpace(w)))
			}
			v = strings.Join(parts, ",")
		}
		st[intent.PathOpenSM+o] = v
	}
	return st
}

func splitTrim(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, numValue(p))
		}
	}
	return out
}
