package lint

import (
	"fmt"
	"strings"
)

// RulesMarkdown renders the rule table as docs/rules.md.
func RulesMarkdown(rules []Rule) string {
	var b strings.Builder
	b.WriteString("# Lint rules\n\n")
	b.WriteString("<!-- Generated from validate/lint (Rules()); edit the rule table and run\n")
	b.WriteString("     `go test ./validate/lint -run TestRulesDoc -update`. -->\n\n")
	b.WriteString("`fabctl validate --static` and the first stage of every `fabctl plan` run these rules over the\n")
	b.WriteString("whole spec. Each finding is a diagnostic pinned to the spec attribute that causes it, with the\n")
	b.WriteString("rule id, a severity (an **error** blocks apply, a **warning** does not) and the rule's source.\n\n")
	b.WriteString("A rule can be silenced on one block (fabric, class, switch, port, host, nic or link) with a\n")
	b.WriteString("reason, which is required:\n\n")
	b.WriteString("```hcl\nswitch \"border1\" {\n  lint_ignore = { \"QOS-5\" = \"storage and RDMA share this border pair by design\" }\n}\n```\n\n")
	b.WriteString("A finding on a port or NIC is also silenced by its switch or host, and any finding by the fabric\n")
	b.WriteString("block. Silenced findings are counted in `--json` output (`suppressed`).\n\n")
	b.WriteString("The rules check the spec's values. A setting a switch, host or nic block leaves\n")
	b.WriteString("[`unmanaged`](spec.md#unmanaged) is not the spec's on that device (fabctl neither sets nor checks\n")
	b.WriteString("it there): the rules still check the spec's value as written, and [QOS-10](#qos-10) warns, per\n")
	b.WriteString("device, where such a setting carries a lossless, RDMA or CNP class, which is then not proven there.\n\n")
	b.WriteString("| Rule | Checks |\n|---|---|\n")
	for _, r := range rules {
		fmt.Fprintf(&b, "| [%s](#%s) | %s |\n", r.ID, strings.ToLower(r.ID), r.Title)
	}
	for _, r := range rules {
		fmt.Fprintf(&b, "\n## %s\n\n**%s**\n\n%s\n\nSource: %s\n", r.ID, r.Title, strings.TrimSpace(r.Rationale), r.Reference)
	}
	return b.String()
}
