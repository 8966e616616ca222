package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/fabctl/fabctl/internal/safefile"
)

// restore puts the NICs of a token back as they were.
func restore(s *session, h *intent.Host, tok token) error {
	var errs []error
	errs = append(errs, restoreSys(s, h, tok.Sys))
	if tok.IRQBalance {
		errs = append(errs, startIRQBalance())
	}
	for _, sn := range tok.NICs {
		link, err := s.nl.LinkByName(sn.NIC)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if link.Attrs().MTU != sn.MTU {
			if err := s.nl.LinkSetMTU(link, sn.MTU); err != nil {
				errs = append(errs, fmt.Errorf("%s: mtu: %w", sn.NIC, err))
			}
		}
		if sn.DCB != nil {
			if sn.DCB.ETS != nil {
				errs = append(errs, s.dcb.UpdateETS(sn.NIC, func(e *dcbnl.ETS) { *e = *sn.DCB.ETS }))
			}
			if sn.DCB.Maxrate != nil {
				m := *sn.DCB.Maxrate
				errs = append(errs, s.dcb.SetMaxrate(sn.NIC, &m))
			}
			if sn.DCB.PFC != nil {
				errs = append(errs, s.dcb.UpdatePFC(sn.NIC, func(p *dcbnl.PFC) { p.Enable, p.Delay = sn.DCB.PFC.Enable, sn.DCB.PFC.Delay }))
			}
			if sn.DCB.Buffer != nil {
				// After PFC: the old PFC set with fabctl's buffers is at most
				// as lossless as before, and one SET goes back to the old
				// mapping and sizes (mlx5 checks the mapping first, then the
				// sizes, each valid as they were). An mlx5 port stays in
				// manual buffer mode: dcbnl has no way back to auto.
				errs = append(errs, s.dcb.UpdateBuffer(sn.NIC, func(b *dcbnl.Buffer) {
					b.Prio2Buffer, b.BufferSize = sn.DCB.Buffer.Prio2Buffer, sn.DCB.Buffer.BufferSize
				}))
			}
			var dscp []dcbnl.App
			for _, a := range sn.DCB.Apps {
				if a.Selector == dcbnl.SelDSCP {
					dscp = append(dscp, a)
				}
			}
			errs = append(errs, setApps(s, sn.NIC, dscp))
		}
		// After DCB: ice resets the netdev on every DCB change
		// (ice_dcbnl_devreset: dev_close + dev_open), which flushes its
		// IPv6 addresses and brings a down netdev up.
		if err := setAddrs(s, link, sn.Addrs); err != nil {
			errs = append(errs, err)
		}
		if !sn.Up {
			if l, err := s.nl.LinkByName(sn.NIC); err == nil && l.Attrs().Flags&unixIFFUp != 0 {
				if err := s.nl.LinkSetDown(l); err != nil {
					errs = append(errs, fmt.Errorf("%s: down: %w", sn.NIC, err))
				}
			}
		}
		if sn.FWLLDP != nil { // after DCB: ice refuses DCB writes while the agent runs
			if on, has, err := fwLLDP(s, sn.NIC); err != nil || !has || on != *sn.FWLLDP {
				errs = append(errs, setFWLLDP(s, sn.NIC, *sn.FWLLDP))
			}
		}
		if sn.Pause != nil {
			errs = append(errs, setPause(s, sn.NIC, *sn.Pause))
		}
		if sn.VLAN != nil { // after the NIC's MTU, as in applyNIC
			errs = append(errs, restoreVLAN(s, sn.NIC, sn.VLAN))
		}
	}
	if tok.EnvFile != "" {
		if tok.Env == nil {
			if err := os.Remove(tok.EnvFile); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		} else if err := safefile.WriteFile(tok.EnvFile, []byte(*tok.Env), 0o644, safefile.Host); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Rollback re-applies the state the transaction saw before it changed
// anything.
func (d *Driver) Rollback(ctx context.Context, t drivers.Target, r drivers.Result) error {
	h, err := hostOf(t)
	if err != nil {
		return err
	}
	if h.Connect.Kind == "ssh" {
		return d.rollbackRemote(ctx, t, h, r)
	}
	var tok token
	if err := json.Unmarshal([]byte(r.Token), &tok); err != nil {
		return fmt.Errorf("%s: rollback token: %w", h.Name, err)
	}
	s, err := open(h)
	if err != nil {
		return err
	}
	defer s.close()
	return restore(s, h, tok)
}
