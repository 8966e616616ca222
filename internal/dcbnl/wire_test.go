package dcbnl

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// The reference arrays below are written out from the uapi layouts in
// include/uapi/linux/dcbnl.h, little-endian (x86_64, arm64).
func skipBigEndian(t *testing.T) {
	t.Helper()
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	if b[0] != 1 {
		t.Skip("reference bytes are little-endian")
	}
}

func TestETSBytes(t *testing.T) {
	skipBigEndian(t)
	e := ETS{Willing: 1, ETSCap: 8, CBS: 0,
		TCTxBW: [8]uint8{50, 0, 0, 50}, TCRxBW: [8]uint8{1, 2, 3, 4, 5, 6, 7, 8},
		TCTSA:  [8]uint8{TSAETS, TSAStrict, TSAStrict, TSAETS, 0, 0, TSAStrict, TSAVendor},
		PrioTC: [8]uint8{0, 0, 0, 3, 0, 0, 6, 0}, TCRecoBW: [8]uint8{9}, TCRecoTSA: [8]uint8{7: 2}, RecoPrioTC: [8]uint8{1, 1}}
	want := []byte{
		1, 8, 0, // 0 willing, 1 ets_cap, 2 cbs
		50, 0, 0, 50, 0, 0, 0, 0, // 3..10 tc_tx_bw[8]
		1, 2, 3, 4, 5, 6, 7, 8, // 11..18 tc_rx_bw[8]
		2, 0, 0, 2, 0, 0, 0, 255, // 19..26 tc_tsa[8]
		0, 0, 0, 3, 0, 0, 6, 0, // 27..34 prio_tc[8]
		9, 0, 0, 0, 0, 0, 0, 0, // 35..42 tc_reco_bw[8]
		0, 0, 0, 0, 0, 0, 0, 2, // 43..50 tc_reco_tsa[8]
		1, 1, 0, 0, 0, 0, 0, 0, // 51..58 reco_prio_tc[8]
	}
	got := e.Marshal()
	if !bytes.Equal(got, want) {
		t.Fatalf("ETS bytes\n got %v\nwant %v", got, want)
	}
	var back ETS
	if err := back.Unmarshal(want); err != nil || back != e {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	if err := back.Unmarshal(want[:58]); err == nil {
		t.Fatal("short ieee_ets accepted")
	}
}

func TestPFCBytes(t *testing.T) {
	skipBigEndian(t)
	p := PFC{Cap: 8, Enable: 1 << 3, MBC: 0, Delay: 0x0102}
	p.Requests[3] = 0x1122334455667788
	p.Indications[7] = 5
	want := make([]byte, 136)
	want[0] = 8    // pfc_cap
	want[1] = 0x08 // pfc_en: priority 3
	want[2] = 0    // mbc
	// 3: padding
	want[4], want[5] = 0x02, 0x01 // 4..5 delay u16 = 0x0102
	// 6..7: padding
	copy(want[8+3*8:], []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}) // requests[3] at 8+24
	want[72+7*8] = 5                                                           // indications[7] at 72+56
	got := p.Marshal()
	if !bytes.Equal(got, want) {
		t.Fatalf("PFC bytes\n got %v\nwant %v", got, want)
	}
	var back PFC
	if err := back.Unmarshal(want); err != nil || back != p {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

func TestAppMaxrateBufferBytes(t *testing.T) {
	skipBigEndian(t)
	a := App{Selector: SelDSCP, Priority: 3, Protocol: 26}
	if got, want := a.Marshal(), []byte{5 /* selector DSCP */, 3 /* priority */, 26, 0 /* protocol u16 */}; !bytes.Equal(got, want) {
		t.Fatalf("dcb_app %v want %v", got, want)
	}
	m := Maxrate{1: 100000, 7: 1}
	want := make([]byte, 64)
	copy(want[8:], []byte{0xa0, 0x86, 0x01}) // tc_maxrate[1] = 100000 Kbps at offset 8
	want[56] = 1                             // tc_maxrate[7] at offset 56
	if got := m.Marshal(); !bytes.Equal(got, want) {
		t.Fatalf("ieee_maxrate %v", got)
	}
	b := Buffer{Prio2Buffer: [8]uint8{0, 0, 0, 1, 0, 0, 0, 0}, BufferSize: [8]uint32{0x10000, 0x20000}, TotalSize: 0x01020304}
	wantB := []byte{
		0, 0, 0, 1, 0, 0, 0, 0, // 0..7 prio2buffer[8]
		0, 0, 1, 0, // 8..11 buffer_size[0] = 0x10000
		0, 0, 2, 0, // 12..15 buffer_size[1] = 0x20000
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 16..39 buffer_size[2..7]
		4, 3, 2, 1, // 40..43 total_size
	}
	if got := b.Marshal(); !bytes.Equal(got, wantB) {
		t.Fatalf("dcbnl_buffer\n got %v\nwant %v", got, wantB)
	}
	var bb Buffer
	if err := bb.Unmarshal(wantB); err != nil || bb != b {
		t.Fatalf("buffer round trip %v %+v", err, bb)
	}
}

func TestRequestBytes(t *testing.T) {
	skipBigEndian(t)
	got, err := EncodeGet("eth1")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0, 21, 0, 0, // dcbmsg: family AF_UNSPEC, cmd IEEE_GET(21), pad
		9, 0, 1, 0, // nla_len 9 (4 + "eth1\0"), nla_type DCB_ATTR_IFNAME(1)
		'e', 't', 'h', '1', 0, 0, 0, 0, // "eth1\0" padded to 8
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("IEEE_GET\n got %v\nwant %v", got, want)
	}

	got, err = EncodeApps(CmdIEEESet, "eth1", []App{{SelDSCP, 3, 26}, {SelPCP, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	want = []byte{
		0, 20, 0, 0, // dcbmsg: cmd IEEE_SET(20)
		9, 0, 1, 0, 'e', 't', 'h', '1', 0, 0, 0, 0, // IFNAME
		24, 0, 13, 0, // DCB_ATTR_IEEE(13), len 4+20, no NLA_F_NESTED (as iproute2)
		20, 0, 3, 0, // DCB_ATTR_IEEE_APP_TABLE(3), len 4+16
		8, 0, 1, 0, 5, 3, 26, 0, // DCB_ATTR_IEEE_APP(1): selector 5, prio 3, protocol 26
		8, 0, 2, 0, 255, 1, 2, 0, // DCB_ATTR_DCB_APP(2): selector PCP 255, prio 1, protocol 2
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("IEEE_SET{APP}\n got %v\nwant %v", got, want)
	}

	got, err = EncodeSetPFC("eth1", &PFC{Enable: 0x08})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4+12+4+4+136 || got[1] != CmdIEEESet ||
		!bytes.Equal(got[16:24], []byte{144, 0, 13, 0, 140, 0, 2, 0}) || got[24+1] != 0x08 {
		t.Fatalf("IEEE_SET{PFC} %v", got[:32])
	}

	got, err = EncodeSetDCBX("eth1", DCBXHost|DCBXVerIEEE)
	if err != nil {
		t.Fatal(err)
	}
	want = []byte{0, 23, 0, 0, 9, 0, 1, 0, 'e', 't', 'h', '1', 0, 0, 0, 0,
		5, 0, 14, 0, 0x09, 0, 0, 0} // DCB_ATTR_DCBX(14) u8 = HOST|VER_IEEE, padded
	if !bytes.Equal(got, want) {
		t.Fatalf("SDCBX\n got %v\nwant %v", got, want)
	}
}

// ieeeReply is a hand-built IEEE_GET reply as an mlx5 sends it: IFNAME,
// IEEE{ETS, PFC, APP_TABLE{2 DSCP entries}}, DCBX.
func ieeeReply() []byte {
	ets := make([]byte, 60) // 59 + 1 pad
	ets[1] = 8              // ets_cap
	ets[3], ets[6] = 50, 50 // tc_tx_bw[0], tc_tx_bw[3]
	ets[19], ets[22] = 2, 2 // tc_tsa[0], tc_tsa[3] = ETS
	ets[27+3] = 3           // prio_tc[3] = 3
	pfc := make([]byte, 136)
	pfc[0], pfc[1], pfc[4] = 8, 0x08, 7 // pfc_cap 8, pfc_en prio 3, delay 7
	pfc[8+3*8] = 42                     // requests[3] = 42
	b := []byte{0, 21, 0, 0, 9, 0, 1, 0, 'e', 't', 'h', '1', 0, 0, 0, 0}
	nest := []byte{}
	nest = append(nest, 63, 0, 1, 0) // ETS len 4+59
	nest = append(nest, ets...)
	nest = append(nest, 140, 0, 2, 0) // PFC len 4+136
	nest = append(nest, pfc...)
	nest = append(nest, 20, 0, 3, 0, 8, 0, 1, 0, 5, 3, 26, 0, 8, 0, 1, 0, 5, 6, 48, 0)
	b = append(b, byte(4+len(nest)), byte((4+len(nest))>>8), 13, 0)
	b = append(b, nest...)
	b = append(b, 5, 0, 14, 0, 0x09, 0, 0, 0) // DCBX HOST|VER_IEEE
	return b
}

func TestDecodeIEEE(t *testing.T) {
	skipBigEndian(t)
	st, err := DecodeIEEE(ieeeReply())
	if err != nil {
		t.Fatal(err)
	}
	if st.Ifname != "eth1" || st.ETS == nil || st.ETS.TCTxBW[3] != 50 || st.ETS.PrioTC[3] != 3 || st.ETS.TCTSA[3] != TSAETS {
		t.Fatalf("ets %+v", st.ETS)
	}
	if st.PFC == nil || st.PFC.Enable != 0x08 || st.PFC.Delay != 7 || st.PFC.Requests[3] != 42 {
		t.Fatalf("pfc %+v", st.PFC)
	}
	if len(st.Apps) != 2 || st.Apps[1] != (App{SelDSCP, 6, 48}) || st.DCBX == nil || *st.DCBX != 9 {
		t.Fatalf("apps %+v dcbx %v", st.Apps, st.DCBX)
	}
	tbl := DSCPApps(st.Apps)
	if tbl[26] != 3 || tbl[48] != 6 || tbl[0] != -1 {
		t.Fatalf("dscp table %v", tbl)
	}
	// A truncated struct is an error, not a panic or a zero value.
	bad := ieeeReply()
	bad[16+4] = 30 // ETS nla_len 30: shorter than ieee_ets
	if _, err := DecodeIEEE(bad); err == nil {
		t.Fatal("short ETS accepted")
	}
}

func TestDecodeStatus(t *testing.T) {
	ok := []byte{0, 20, 0, 0, 5, 0, 13, 0, 0, 0, 0, 0}
	if st, err := DecodeStatus(ok, CmdIEEESet, AttrIEEE); err != nil || st != 0 {
		t.Fatal(st, err)
	}
	einval := []byte{0, 20, 0, 0, 5, 0, 13, 0, 0xea /* int8 -22 */, 0, 0, 0}
	if st, err := DecodeStatus(einval, CmdIEEESet, AttrIEEE); err != nil || st != -22 {
		t.Fatal(st, err)
	}
	if _, err := DecodeStatus([]byte{0, 21, 0, 0}, CmdIEEESet, AttrIEEE); err == nil {
		t.Fatal("wrong command accepted")
	}
	if _, err := DecodeStatus([]byte{0, 20, 0, 0}, CmdIEEESet, AttrIEEE); err == nil {
		t.Fatal("missing status accepted")
	}
}

func FuzzDecodeIEEE(f *testing.F) {
	f.Add(ieeeReply())
	f.Add([]byte{0, 21, 0, 0})
	f.Add([]byte{0, 21, 0, 0, 4, 0, 13, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := DecodeIEEE(b)
		if err != nil {
			return
		}
		// Whatever decoded must re-encode to full-size structs.
		if st.ETS != nil && len(st.ETS.Marshal()) != ETSLen {
			t.Fatal("ets size")
		}
		if st.PFC != nil && len(st.PFC.Marshal()) != PFCLen {
			t.Fatal("pfc size")
		}
		_ = DSCPApps(st.Apps)
	})
}

func FuzzDecodeStatus(f *testing.F) {
	f.Add([]byte{0, 20, 0, 0, 5, 0, 13, 0, 0xea, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeStatus(b, CmdIEEESet, AttrIEEE)
		_, _ = DecodeDCBX(b)
	})
}

// TestDecodeNotification: an RTNLGRP_DCB message is the IEEE_GET body
// with the command that caused it; CEE notifications carry no IEEE state.
func TestDecodeNotification(t *testing.T) {
	skipBigEndian(t)
	for _, cmd := range []uint8{CmdIEEESet, CmdIEEEDel} {
		b := ieeeReply()
		b[1] = cmd
		got, st, ok, err := DecodeNotification(b)
		if err != nil || !ok || got != cmd {
			t.Fatalf("cmd %d: %d %v %v", cmd, got, ok, err)
		}
		if st.Ifname != "eth1" || st.PFC == nil || st.PFC.Enable != 0x08 || len(st.Apps) != 2 {
			t.Fatalf("cmd %d: %+v", cmd, st)
		}
	}
	cee := ieeeReply()
	cee[1] = 26 // DCB_CMD_CEE_GET
	if _, _, ok, err := DecodeNotification(cee); ok || err != nil {
		t.Fatalf("CEE notification: ok %v err %v", ok, err)
	}
	bad := ieeeReply()
	bad[1] = CmdIEEESet
	bad[16+4] = 30
	if _, _, _, err := DecodeNotification(bad); err == nil {
		t.Fatal("short ETS accepted")
	}
	if _, _, _, err := DecodeNotification([]byte{0, 20}); err == nil {
		t.Fatal("truncated header accepted")
	}
}

func FuzzDecodeNotification(f *testing.F) {
	b := ieeeReply()
	b[1] = CmdIEEESet
	f.Add(b)
	f.Add([]byte{0, 27, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, st, ok, err := DecodeNotification(b)
		if err == nil && ok && st == nil {
			t.Fatal("ok without state")
		}
	})
}
