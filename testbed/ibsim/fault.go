package ibsim

import (
	"context"
	"fmt"
	"strings"
	"syscall"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/internal/safefile"
)

// Faults on a running simulated subnet, for `fabctl testbed fault`: what
// goes wrong on a real fabric, each of which validate (and plan) must
// name by port.

// Recable moves two running cables: the cable at a now ends at bPeer and
// the cable at b at aPeer (a crossed pair, what a technician swapping two
// cables does). It takes both cables down (ibsim console Unlink), links
// the ports crosswise (console Link "a"[p] "b"[q], ibsim/sim_cmd.c
// do_link: both ports must be free) and has opensm sweep the new
// cabling (SIGHUP forces a heavy sweep: opensm/main.c osm_hup_flag), so
// the adapters get routes again.
func (s *Sim) Recable(ctx context.Context, a, aPeer, b, bPeer ibfabric.PortRef) error {
	for _, p := range []ibfabric.PortRef{a, b} {
		if err := s.LinkDown(ctx, p); err != nil {
			return err
		}
	}
	for _, pair := range [][2]ibfabric.PortRef{{a, bPeer}, {b, aPeer}} {
		cmd := fmt.Sprintf("Link %q[%d] %q[%d]", pair[0].Node, pair[0].Port, pair[1].Node, pair[1].Port)
		out, err := s.Console(ctx, cmd)
		if err != nil {
			return err
		}
		if err := consoleErr(cmd, out); err != nil {
			return err
		}
	}
	return s.Resweep(ctx)
}

// Resweep makes opensm run a heavy sweep (SIGHUP) and waits for its
// SUBNET UP.
func (s *Sim) Resweep(ctx context.Context) error {
	n := s.SubnetUps()
	if err := syscall.Kill(s.OpenSMPID, syscall.SIGHUP); err != nil {
		return fmt.Errorf("SIGHUP opensm %d: %w", s.OpenSMPID, err)
	}
	return s.WaitSubnetUp(ctx, n)
}

// PartitionsFile is the partitions.conf the Sim's opensm reads (where
// fabctl's opensm driver writes it too: the Sim's opensm.conf names it).
func (s *Sim) PartitionsFile() string { return s.path(OpenSMDir, "partitions.conf") }

// DropMember removes a port GUID from a partition in opensm's
// partitions.conf and has opensm sweep it in: the subnet manager's files
// drifted from the spec (an old render, a hand edit), and the port loses
// the partition's P_Key.
func (s *Sim) DropMember(ctx context.Context, partition string, portGUID uint64) error {
	b, err := safefile.ReadFile(s.PartitionsFile(), safefile.Testbed)
	if err != nil {
		return fmt.Errorf("the simulated subnet manager has no partitions file (run fabctl apply first): %w", err)
	}
	out, err := dropMember(string(b), partition, portGUID)
	if err != nil {
		return err
	}
	if err := safefile.WriteFile(s.PartitionsFile(), []byte(out), 0o644, safefile.Testbed); err != nil {
		return err
	}
	return s.Resweep(ctx)
}

// dropMember edits partitions.conf text (opensm(8) PARTITION
// CONFIGURATION, doc/partition-config.txt: "name[=pkey][,flags] :
// member[=full|limited|both], member ... ;", "#" to the end of a line a
// comment) to remove one member line of a partition. When the removed
// member ended the list (it held the ";"), the member before it gets the
// ";".
func dropMember(text, partition string, guid uint64) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	code := func(l string) string {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			return l[:i]
		}
		return l
	}
	want := ibfabric.GUID(guid)
	in, found := false, false
	prev := -1 // the previous member line of the partition
	for i, l := range lines {
		c := strings.TrimSpace(code(l))
		if !in {
			name, _, ok := strings.Cut(c, "=")
			if !ok {
				name, _, ok = strings.Cut(c, ":")
			}
			if ok && strings.TrimSpace(name) == partition && strings.Contains(c, ":") {
				in = true
			}
			continue
		}
		if c == "" {
			continue
		}
		id := strings.FieldsFunc(c, func(r rune) bool { return r == '=' || r == ',' || r == ';' || r == ' ' || r == '\t' })
		if len(id) > 0 && strings.EqualFold(id[0], want) {
			ends := strings.Contains(c, ";")
			lines[i] = ""
			found = true
			if ends {
				if prev < 0 {
					return "", fmt.Errorf("partition %q: %s is its only member; drop another or remove the partition", partition, want)
				}
				pc := code(lines[prev])
				j := strings.LastIndexByte(pc, ',')
				if j < 0 {
					return "", fmt.Errorf("partition %q: cannot end the member list before %s", partition, want)
				}
				lines[prev] = pc[:j] + " ;" + lines[prev][j+1:]
			}
			break
		}
		if strings.Contains(c, ";") {
			break
		}
		prev = i
	}
	if !in {
		return "", fmt.Errorf("no partition %q in the subnet manager's partitions.conf", partition)
	}
	if !found {
		return "", fmt.Errorf("partition %q has no member %s in the subnet manager's partitions.conf", partition, want)
	}
	return strings.Join(lines, ""), nil
}
