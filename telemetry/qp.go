package telemetry

import (
	"encoding/binary"
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// RDMA netlink (NETLINK_RDMA, client RDMA_NL_NLDEV) values from the
// kernel's include/uapi/rdma/rdma_netlink.h (enum rdma_nldev_command,
// enum rdma_nldev_attr) and include/rdma/ib_verbs.h (enum ib_qp_state).
const (
	nldevClient       = 5  // RDMA_NL_NLDEV
	nldevCmdGet       = 1  // RDMA_NLDEV_CMD_GET (can dump)
	nldevAttrDevIndex = 1  // RDMA_NLDEV_ATTR_DEV_INDEX (u32)
	nldevCmdResQPGet  = 10 // RDMA_NLDEV_CMD_RES_QP_GET (can dump)
	nldevAttrDevName  = 2  // RDMA_NLDEV_ATTR_DEV_NAME (string)
	nldevAttrPort     = 3  // RDMA_NLDEV_ATTR_PORT_INDEX (u32)
	nldevAttrResQP    = 19 // RDMA_NLDEV_ATTR_RES_QP (nested table)
	nldevAttrResQPEnt = 20 // RDMA_NLDEV_ATTR_RES_QP_ENTRY (nested)
	nldevAttrResLQPN  = 21 // RDMA_NLDEV_ATTR_RES_LQPN (u32)
	nldevAttrResState = 27 // RDMA_NLDEV_ATTR_RES_STATE (u8)
	ibQPSErr          = 6  // IB_QPS_ERR: RESET, INIT, RTR, RTS, SQD, SQE, ERR
)

// QPCount is one RDMA device's queue pairs: all of them and those in the
// error state.
type QPCount struct {
	Total, Error int
}

// QPReader reads every RDMA device's QP counts by device name.
type QPReader func() (map[string]QPCount, error)

// ReadQPs dumps the QPs of every RDMA device with RDMA netlink, as
// `rdma resource show qp` does: the devices first (RDMA_NLDEV_CMD_GET
// with NLM_F_DUMP: DEV_INDEX and DEV_NAME each), then per device
// RDMA_NLDEV_CMD_RES_QP_GET with NLM_F_DUMP and its DEV_INDEX (the
// kernel's drivers/infiniband/core/nldev.c res_get_common_dumpit refuses a
// dump without one: "we are expecting the device index to get res
// information", EINVAL). It answers with DEV_INDEX and DEV_NAME and a
// RES_QP table of RES_QP_ENTRY nests, each with PORT_INDEX (once the QP
// has a port), LQPN, ... and RES_STATE, the ib_qp_state of ib_query_qp
// (fill_res_qp_entry, fill_res_qp_entry_query).
func ReadQPs() (map[string]QPCount, error) {
	req := nl.NewNetlinkRequest(nldevClient<<nl.RDMA_NL_GET_CLIENT_SHIFT|nldevCmdGet, unix.NLM_F_ACK|unix.NLM_F_DUMP)
	devs, err := req.Execute(unix.NETLINK_RDMA, 0)
	if err != nil {
		return nil, fmt.Errorf("RDMA netlink device dump: %w", err)
	}
	out := map[string]QPCount{}
	for _, d := range devs {
		attrs, err := parseAttrs(d)
		if err != nil {
			return nil, fmt.Errorf("RDMA netlink device dump: %w", err)
		}
		var index []byte
		for _, a := range attrs {
			if a.typ == nldevAttrDevIndex && len(a.val) == 4 {
				index = a.val
			}
		}
		if index == nil {
			return nil, fmt.Errorf("RDMA netlink device dump: a device without RDMA_NLDEV_ATTR_DEV_INDEX")
		}
		q := nl.NewNetlinkRequest(nldevClient<<nl.RDMA_NL_GET_CLIENT_SHIFT|nldevCmdResQPGet, unix.NLM_F_ACK|unix.NLM_F_DUMP)
		q.AddData(nl.NewRtAttr(nldevAttrDevIndex, index))
		msgs, err := q.Execute(unix.NETLINK_RDMA, 0)
		if err != nil {
			return nil, fmt.Errorf("RDMA netlink QP dump: %w", err)
		}
		got, err := ParseQPDump(msgs)
		if err != nil {
			return nil, err
		}
		for dev, c := range got {
			out[dev] = c
		}
	}
	return out, nil
}

// ParseQPDump decodes the messages of a RES_QP_GET dump (each without
// its netlink header) into QP counts per device.
func ParseQPDump(msgs [][]byte) (map[string]QPCount, error) {
	out := map[string]QPCount{}
	for _, m := range msgs {
		attrs, err := parseAttrs(m)
		if err != nil {
			return nil, fmt.Errorf("RDMA netlink QP dump: %w", err)
		}
		dev := ""
		var table []byte
		for _, a := range attrs {
			switch a.typ {
			case nldevAttrDevName:
				dev = nulTrim(a.val)
			case nldevAttrResQP:
				table = a.val
			}
		}
		if dev == "" {
			return nil, fmt.Errorf("RDMA netlink QP dump: a message without RDMA_NLDEV_ATTR_DEV_NAME")
		}
		c := out[dev]
		if table != nil {
			ents, err := parseAttrs(table)
			if err != nil {
				return nil, fmt.Errorf("RDMA netlink QP dump of %s: %w", dev, err)
			}
			for _, e := range ents {
				if e.typ != nldevAttrResQPEnt {
					continue
				}
				fields, err := parseAttrs(e.val)
				if err != nil {
					return nil, fmt.Errorf("RDMA netlink QP entry of %s: %w", dev, err)
				}
				c.Total++
				for _, f := range fields {
					if f.typ == nldevAttrResState && len(f.val) >= 1 && f.val[0] == ibQPSErr {
						c.Error++
					}
				}
			}
		}
		out[dev] = c
	}
	return out, nil
}

type attr struct {
	typ uint16 // without NLA_F_NESTED / NLA_F_NET_BYTEORDER
	val []byte
}

// parseAttrs splits netlink attributes (struct nlattr: u16 length, u16
// type, the value, padded to 4 bytes), failing on a length that does not
// fit instead of reading past the buffer.
func parseAttrs(b []byte) ([]attr, error) {
	var out []attr
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("truncated attribute (%d bytes)", len(b))
		}
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		if l < 4 || l > len(b) {
			return nil, fmt.Errorf("attribute length %d with %d bytes left", l, len(b))
		}
		out = append(out, attr{typ: binary.NativeEndian.Uint16(b[2:4]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER), val: b[4:l]})
		adv := (l + 3) &^ 3
		if adv > len(b) {
			adv = len(b)
		}
		b = b[adv:]
	}
	return out, nil
}

func nulTrim(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// u32 attribute helper for tests and callers that build dumps.
func nlU32(v uint32) []byte {
	b := make([]byte, 4)
	binary.NativeEndian.PutUint32(b, v)
	return b
}
