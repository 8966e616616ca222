package spec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/fabgen"
	"github.com/hashicorp/hcl/v2"
)

// TestStreamedEqualsWhole loads large specs both ways: streamed (chunk by
// chunk, decoding as it goes) and whole (every chunk parsed, then the
// merged body decoded). Where the stream does not give up, the model,
// files and diagnostics (in order, with snippets) must be identical; and
// it must not give up on the inputs it is meant for.
func TestStreamedEqualsWhole(t *testing.T) {
	big := string(fabgen.Generate(fabgen.Pod.Scale(8))) // ~0.95 MB: chunked
	if len(big) < chunkMinFile || len(splitTopLevel([]byte(big))) < 2 {
		t.Fatal("the base spec is not large enough to stream")
	}
	nth := func(marker string, n int) int {
		i := -1
		for k := 0; k <= n; k++ {
			j := strings.Index(big[i+1:], marker)
			if j < 0 {
				t.Fatalf("no %d-th %q", n, marker)
			}
			i += 1 + j
		}
		return i + 1
	}
	ins := func(at int, text string) string { return big[:at] + text + big[at:] }
	host := nth("\nhost \"", 300)
	link := nth("\nlink {", 2500)
	header := big[:strings.Index(big, "credentials \"switches\"")]
	rest := big[len(header):]

	type tc struct {
		name   string
		files  []File
		stream bool // the stream must take it (else: must give up)
	}
	one := func(name, src string, stream bool) tc {
		return tc{name, []File{{Name: "big.fab.hcl", Data: []byte(src)}}, stream}
	}
	cases := []tc{
		one("generated", big, true),
		one("unknown attribute in a link", ins(link+len("link {\n"), "  adress = \"x\"\n"), true),
		one("unknown attribute in a nic", strings.Replace(big, "    model     = \"connectx-7\"\n", "    modle     = \"connectx-7\"\n", 1), true),
		one("unknown endpoint", strings.Replace(big, "\"gpu00100:rail1\"", "\"gpu99999:rail1\"", 1), true),
		one("endpoint used twice", strings.Replace(big, "\"gpu00100:rail1\"", "\"gpu00100:rail2\"", 1), true),
		one("speed mismatch", strings.Replace(big, "    device    = \"mlx5_3\"\n", "    device    = \"mlx5_3\"\n    speed = \"100G\"\n", 5), true),
		one("invalid address", strings.Replace(big, "/31\"]", "/33\"]", 3), true),
		one("fabric last", rest+"\n"+header, true),
		one("class in the middle", ins(host, "class \"extra\" {\n  priority = 5\n}\n\n"), true),
		one("invalid class in the middle", ins(host, "class \"extra\" {\n  priority = 55\n}\n\n"), true),
		one("variable last", strings.Replace(big, "role        = \"spine\"", "role        = var.r", 1)+"\nvariable \"r\" {\n  default = \"spine\"\n}\n", true),
		one("dynamic nic", ins(host, "host \"dyn\" {\n  address = \"10.9.9.9\"\n  dynamic \"nic\" {\n    for_each = [\"a\"]\n    labels = [nic.value]\n    content {\n      device = \"d\"\n    }\n  }\n}\n\n"), true),
		one("misspelled dynamic", ins(host, "host \"t\" {\n  address = \"1.1.1.1\"\n  dynamc \"nic\" {\n  }\n}\n\n"), true),
		one("for_each host", ins(host, "host \"fe\" {\n  for_each = toset([\"a\", \"b\"])\n  address = \"10.8.8.8\"\n}\n\n"), true),
		one("validate and infiniband in the middle", ins(host, "validate \"v\" {\n  class = \"nope\"\n}\n\ninfiniband {\n}\n\n"), true),
		one("duplicate host", ins(link, "host \"gpu00003\" {\n  address = \"1.2.3.4\"\n}\n\n"), true),
		one("expressions and objects", strings.Replace(strings.Replace(big, "speed        = \"400G\"", "speed        = format(\"%dG\", 400)", 50),
			"  speed        = \"800G\"\n", "  speed        = \"800G\"\n  lint_ignore = { \"X-1\" = \"why\" }\n", 20), true),
		one("CRLF, tabs and comments", strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(big, "link {\n", "# a link\nlink { // c\n"), "  ", "\t"), "\n", "\r\n"), true),
		one("numbers and bools", strings.Replace(strings.Replace(big, "  role        = \"leaf\"\n", "  role        = \"leaf\"\n  mtu = 9000\n  pfc = [3, 4]\n", 30),
			"    model     = \"connectx-7\"\n", "    model     = \"connectx-7\"\n    pause = true\n    mtu = 90000\n", 40), true),
		{"fabric and inventory in files", []File{
			{Name: "a.fab.hcl", Data: []byte(header)},
			{Name: "b.fab.hcl", Data: []byte(rest)},
			{Name: "c.fab.hcl", Data: []byte("switch \"extra\" {\n  platform = \"eos\"\n  address = \"10.99.0.1\"\n}\n")},
		}, true},

		one("syntax error", ins(host, "host \"broken\" {\n  address = \n}\n"), false),
		one("top-level attribute", ins(host, "oops = 1\n\n"), false),
		one("unknown block type", ins(host, "hots \"x\" {\n}\n\n"), false),
		one("wrong label count", ins(link, "link \"x\" {\n}\n\n"), false),
		one("invalid variable", big+"\nvariable \"x\" {\n  default = nope\n}\n", false),
		one("no fabric", rest, false),
		one("small", header, false),
		{"with JSON", []File{{Name: "a.fab.hcl", Data: []byte(big)}, {Name: "b.fab.hcl.json", Data: []byte(`{}`)}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			streamed := &Spec{Files: map[string]*hcl.File{}, SourceHash: "h"}
			sd, ok := loadStreamed(c.files, LoadOptions{Platforms: testPlatforms}, streamed)
			if ok != c.stream {
				t.Fatalf("streamed: %v, want %v", ok, c.stream)
			}
			if !ok {
				return
			}
			dropTrees(streamed.Files)
			whole, wd := loadWhole(c.files, LoadOptions{Platforms: testPlatforms}, "h")
			sj, _ := json.Marshal(ToJSON(sd, streamed.Files))
			wj, _ := json.Marshal(ToJSON(wd, whole.Files))
			if string(sj) != string(wj) {
				t.Fatalf("diagnostics differ:\nstreamed %s\nwhole    %s", sj, wj)
			}
			if !reflect.DeepEqual(streamed, whole) {
				t.Fatal("models differ")
			}
			if c.name == "generated" && (len(sd) != 0 || len(streamed.Links) != fabgen.Pod.Scale(8).Links()) {
				t.Fatalf("%d links, diagnostics %v", len(streamed.Links), sd)
			}
		})
	}
}
