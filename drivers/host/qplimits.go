package host

import (
	"bufio"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// QP sizing against the device. The limits an application's
// ibv_create_qp/ibv_create_cq must respect come from ibv_query_device
// (struct ibv_device_attr): neither sysfs nor RDMA netlink (nldev) has
// them, and the verbs call needs libibverbs (cgo), which this driver does
// not link. So the driver asks ibv_devinfo -v (rdma-core's ibverbs-utils)
// when it is installed, and otherwise says the live check is unavailable;
// the spec's model table is checked statically by lint rule HOST-1.

type devLimits struct {
	MaxQPWR, MaxSGE, MaxCQE, MaxQP, MaxCQ int
}

// ibvDevinfo runs `ibv_devinfo -v -d dev` (a variable so tests feed
// recorded output).
var ibvDevinfo = func(dev string) (string, error) {
	if _, err := exec.LookPath("ibv_devinfo"); err != nil {
		return "", errNoDevinfo
	}
	out, err := exec.Command("ibv_devinfo", "-v", "-d", dev).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ibv_devinfo -v -d %s: %v: %s", dev, err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

var errNoDevinfo = errors.New("ibv_devinfo not installed")

// parseDevinfo reads the device attributes of `ibv_devinfo -v` output
// ("\tmax_qp_wr:\t\t\t16351" lines).
func parseDevinfo(out string) (devLimits, error) {
	var l devLimits
	fields := map[string]*int{"max_qp_wr": &l.MaxQPWR, "max_sge": &l.MaxSGE, "max_cqe": &l.MaxCQE, "max_qp": &l.MaxQP, "max_cq": &l.MaxCQ}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		p, want := fields[strings.TrimSpace(k)]
		if !want || *p != 0 {
			continue // the first occurrence is the device's (port sections follow)
		}
		n, err := strconv.Atoi(strings.Fields(strings.TrimSpace(v) + " x")[0])
		if err != nil {
			return devLimits{}, fmt.Errorf("ibv_devinfo: %s: %q is not a number", k, strings.TrimSpace(v))
		}
		*p = n
	}
	if l.MaxQPWR == 0 || l.MaxCQE == 0 || l.MaxSGE == 0 {
		return devLimits{}, fmt.Errorf("ibv_devinfo output has no max_qp_wr/max_sge/max_cqe (not -v output?)")
	}
	return l, nil
}

// qpFindings checks the host's QP sizing against a NIC's live device
// limits, and the spec's model table against the device.
func qpFindings(qp spec.QPSizing, n *intent.NIC) []drivers.Finding {
	if n.Device == "" {
		return nil
	}
	path := "nic/" + n.Name + "/qp"
	out, err := ibvDevinfo(n.Device)
	if err != nil {
		msg := fmt.Sprintf("%s: device limits of %s unavailable (%v): sysfs and RDMA netlink do not expose max_qp_wr/max_sge/max_cqe; QP sizing checked only against the model table (lint HOST-1)", n.Name, n.Device, err)
		return []drivers.Finding{{Severity: "info", Path: path, Message: msg}}
	}
	lim, err := parseDevinfo(out)
	if err != nil {
		return []drivers.Finding{{Severity: "warning", Path: path, Message: fmt.Sprintf("%s: %s: %v", n.Name, n.Device, err)}}
	}
	var fs []drivers.Finding
	over := func(attr string, want int, limit string, have int) {
		if want > have {
			fs = append(fs, drivers.Finding{Severity: "warning", Path: path, Message: fmt.Sprintf(
				"%s: qp %s = %d exceeds %s's %s %d: ibv_create_qp/ibv_create_cq fail with EINVAL on this device",
				n.Name, attr, want, n.Device, limit, have)})
		}
	}
	over("max_send_wr", qp.MaxSendWR, "max_qp_wr", lim.MaxQPWR)
	over("max_recv_wr", qp.MaxRecvWR, "max_qp_wr", lim.MaxQPWR)
	over("max_sge", qp.MaxSGE, "max_sge", lim.MaxSGE)
	over("cq_depth", qp.CQDepth, "max_cqe", lim.MaxCQE)
	if n.Limits.Known {
		var diff []string
		for _, c := range []struct {
			name       string
			spec, live int
		}{{"max_qp_wr", n.Limits.MaxQPWR, lim.MaxQPWR}, {"max_sge", n.Limits.MaxSGE, lim.MaxSGE}, {"max_cqe", n.Limits.MaxCQE, lim.MaxCQE}} {
			if c.spec > 0 && c.spec != c.live {
				diff = append(diff, fmt.Sprintf("%s %d (spec %d)", c.name, c.live, c.spec))
			}
		}
		if len(diff) > 0 {
			fs = append(fs, drivers.Finding{Severity: "info", Path: path, Message: fmt.Sprintf(
				"%s: %s reports %s: the spec's limits (model %q or limits block) differ from the device", n.Name, n.Device, strings.Join(diff, ", "), n.Model)})
		}
	}
	return fs
}
