package verbs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// The control channel is TCP carrying one JSON object per line. Every
// message names the protocol version; a peer of another major version is
// refused with a message that says so. JSON, not perftest's fixed text
// record: it is versioned, self-describing and easy to fuzz.

// ProtoVersion is the control protocol's version.
const ProtoVersion = 1

// maxMessage bounds one line (an endpoint with 1024 QPs is ~50 KB).
const maxMessage = 1 << 20

// Message types, in the order a test exchanges them.
const (
	MsgHello    = "hello"     // client -> server: the test
	MsgHelloAck = "hello_ack" // server -> client: accepted (rdma_cm port)
	MsgEndpoint = "endpoint"  // both: QPNs, PSNs, GID, LID, rkey, address, MTU
	MsgReady    = "ready"     // both: QPs are in RTS (or connected), receives posted
	MsgDone     = "done"      // client -> server: the client finished (messages sent)
	MsgResult   = "result"    // server -> client: what the server saw
	MsgError    = "error"     // either: this side failed; the text says why
)

// Message is one control message. Exactly the payload of its Type is set.
type Message struct {
	V        int       `json:"v"`
	Type     string    `json:"type"`
	Hello    *Hello    `json:"hello,omitempty"`
	Ack      *Ack      `json:"ack,omitempty"`
	Endpoint *Endpoint `json:"endpoint,omitempty"`
	Done     *Done     `json:"done,omitempty"`
	Result   *Done     `json:"result,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Hello opens a test.
type Hello struct {
	Fabctl string `json:"fabctl"` // version, for error messages
	Test   Test   `json:"test"`
}

// Ack accepts a hello.
type Ack struct {
	// CMPort is the rdma_cm port the server listens on (rdma_cm mode).
	CMPort int `json:"cm_port,omitempty"`
}

// Done reports a side's message count when it finished.
type Done struct {
	Messages uint64 `json:"messages"`
}

// Encode writes one message as a JSON line.
func Encode(w io.Writer, m *Message) error {
	m.V = ProtoVersion
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Decode parses and checks one message (without its newline).
func Decode(line []byte) (*Message, error) {
	if len(line) > maxMessage {
		return nil, fmt.Errorf("control message too long (%d bytes)", len(line))
	}
	var probe struct {
		V int `json:"v"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return nil, fmt.Errorf("malformed control message: %v", err)
	}
	if probe.V != ProtoVersion {
		return nil, fmt.Errorf("the peer speaks control protocol v%d, this fabctl v%d: run the same fabctl version on both hosts", probe.V, ProtoVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var m Message
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("malformed control message: %v", err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("invalid %s message: %v", m.Type, err)
	}
	return &m, nil
}

func (m *Message) check() error {
	set := 0
	for _, p := range []bool{m.Hello != nil, m.Ack != nil, m.Endpoint != nil, m.Done != nil, m.Result != nil, m.Error != ""} {
		if p {
			set++
		}
	}
	need := map[string]bool{
		MsgHello: m.Hello != nil, MsgHelloAck: m.Ack != nil, MsgEndpoint: m.Endpoint != nil,
		MsgReady: set == 0, MsgDone: m.Done != nil, MsgResult: m.Result != nil, MsgError: m.Error != "",
	}
	ok, known := need[m.Type]
	switch {
	case !known:
		return fmt.Errorf("unknown message type %q", m.Type)
	case !ok || set > 1:
		return errors.New("wrong payload for the message type")
	}
	if m.Hello != nil {
		t := m.Hello.Test
		if err := t.Check(); err != nil {
			return err
		}
	}
	if e := m.Endpoint; e != nil {
		if len(e.QPs) == 0 || len(e.QPs) > MaxQPs {
			return fmt.Errorf("%d QPs (want 1..%d)", len(e.QPs), MaxQPs)
		}
		for _, q := range e.QPs {
			if q.QPN > 0xffffff || q.PSN > 0xffffff {
				return errors.New("QPN and PSN are 24-bit")
			}
		}
		if len(e.Device) > 64 || e.Port < 1 || e.Port > 255 || e.GIDIndex < -1 || e.GIDIndex > 255 {
			return errors.New("device, port or GID index out of range")
		}
		if e.MTU != 0 && MTUEnum(e.MTU) == 0 {
			return fmt.Errorf("MTU %d is not an RDMA MTU", e.MTU)
		}
	}
	if m.Ack != nil && (m.Ack.CMPort < 0 || m.Ack.CMPort > 65535) {
		return errors.New("rdma_cm port out of range")
	}
	if len(m.Error) > 4096 {
		return errors.New("error text too long")
	}
	return nil
}

// PeerError is a failure the other side reported over the control channel.
type PeerError struct{ Text string }

func (e *PeerError) Error() string { return "peer: " + e.Text }

// Control is one end of a control channel.
type Control struct {
	conn net.Conn
	r    *bufio.Reader
	// Peer names the other side in errors ("198.18.0.1:18615").
	Peer string
}

// NewControl wraps a connected socket.
func NewControl(c net.Conn) *Control {
	return &Control{conn: c, r: bufio.NewReaderSize(c, 64<<10), Peer: c.RemoteAddr().String()}
}

// Close closes the channel.
func (c *Control) Close() error { return c.conn.Close() }

// Send writes a message within timeout.
func (c *Control) Send(m *Message, timeout time.Duration) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(timeout))
	if err := Encode(c.conn, m); err != nil {
		return fmt.Errorf("control channel to %s: send %s: %w", c.Peer, m.Type, err)
	}
	return nil
}

// SendError tells the peer why this side stopped (best effort).
func (c *Control) SendError(err error) {
	var pe *PeerError
	if errors.As(err, &pe) {
		return // the peer knows: it told us
	}
	text := err.Error()
	if len(text) > 4000 {
		text = text[:4000]
	}
	_ = c.Send(&Message{Type: MsgError, Error: text}, 2*time.Second)
}

// Recv reads the next message, which must be of type want, within timeout
// (0: no limit). An error message from the peer becomes a *PeerError.
func (c *Control) Recv(want string, timeout time.Duration, stage string) (*Message, error) {
	if timeout > 0 {
		_ = c.conn.SetReadDeadline(time.Now().Add(timeout))
	} else {
		_ = c.conn.SetReadDeadline(time.Time{})
	}
	line, err := c.readLine()
	if err != nil {
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, fmt.Errorf("%s: no %s from %s within %s (the peer is stuck or gone)", stage, want, c.Peer, timeout)
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%s: %s closed the control channel before sending %s (the peer failed or was stopped; see its output)", stage, c.Peer, want)
		}
		return nil, fmt.Errorf("%s: control channel to %s: %w", stage, c.Peer, err)
	}
	m, err := Decode(line)
	if err != nil {
		return nil, fmt.Errorf("%s: from %s: %w", stage, c.Peer, err)
	}
	if m.Type == MsgError {
		return nil, &PeerError{Text: m.Error}
	}
	if m.Type != want {
		return nil, fmt.Errorf("%s: %s sent %s, expected %s (protocol out of step)", stage, c.Peer, m.Type, want)
	}
	return m, nil
}

func (c *Control) readLine() ([]byte, error) {
	var buf []byte
	for {
		chunk, isPrefix, err := c.r.ReadLine()
		if err != nil {
			return nil, err
		}
		buf = append(buf, chunk...)
		if len(buf) > maxMessage {
			return nil, fmt.Errorf("control message longer than %d bytes", maxMessage)
		}
		if !isPrefix {
			return buf, nil
		}
	}
}
