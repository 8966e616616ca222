// Package agentproto is the wire protocol of `fabctl agent`: the
// versioned JSON request the controller writes on the agent's stdin, the
// response it reads from stdout, the op names and error kinds, decoding
// with errors that say what is wrong, and the build identity
// (handshake) controller and agent compare. The host driver speaks it
// over SSH (drivers/host, transport_ssh.go); package agent (the engine
// that runs requests on the host) serves it. docs/agent.md describes
// the protocol.
//
// The request carries the compiled intent.Host as is: controller and
// agent are always the same build (the controller compares build
// identities and ships its own binary when they differ), so the intent's
// Go shape is the contract and Protocol only versions the envelope.
//
// This package may import intent, drivers and internal/linktruth (the
// contract types: drivers.LinkReader answers a linktruth.DeviceLinks) and
// the standard library only: never the engine (apply, plan, validate, agent),
// so the host driver does not depend on it. What the engine sends in the
// engine's own shapes (a device plan, an apply result, a traffic result)
// travels as raw JSON here.
package agentproto

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// Protocol is the version of the request/response envelope. A change a
// peer of the previous version could misread bumps it. A new op is not
// such a change: an agent that predates it refuses it (Request.Check's
// "unknown op", KindRequest) without doing anything, and the controller
// says that agent is too old for the op (Response.UnknownOp); so OpLinks
// kept version 1.
const Protocol = 1

// MaxRequest bounds the request read from stdin: a host intent is a few
// kilobytes; anything near this is not a request.
const MaxRequest = 16 << 20

// Op is what the agent is asked to do.
type Op string

// Operations.
const (
	// OpRead reads the live state of what the intent manages.
	OpRead Op = "read"
	// OpPlan reads and diffs, and returns the device plan with its steps.
	OpPlan Op = "plan"
	// OpApply with Steps applies exactly those steps as one transaction
	// (the controller planned them and verifies by reading back). Without
	// Steps it plans locally, applies, reads back and verifies (re-apply
	// mode, --reapply).
	OpApply Op = "apply"
	// OpRollback restores the state a transaction saw (Token).
	OpRollback Op = "rollback"
	// OpTraffic runs one step of fabctl validate's traffic test on the
	// host: a side of a test pair, or a read of a NIC's counters. Traffic
	// carries the request and the response's Traffic the result, both in
	// validate/traffic's shape (controller and agent are the same build);
	// package agent hands them to that package, and progress (the
	// server's "ready" line) goes to stderr as it happens.
	OpTraffic Op = "traffic"
	// OpLinks reads the link truth of the intent's NICs (the host
	// driver's drivers.LinkReader for a local or netns host: state,
	// IFF_UP, counters, speed, the LLDP neighbours through lldpd) and
	// returns it in the response's Links, a linktruth.DeviceLinks
	// (DecodeLinks).
	OpLinks Op = "links"
)

// opNames lists the ops for Check's errors.
const opNames = "read, plan, apply, rollback, traffic or links"

// Request is what the agent reads on stdin.
type Request struct {
	Protocol int          `json:"protocol"`
	Op       Op           `json:"op"`
	Host     *intent.Host `json:"host"`
	// Netns: work inside this network namespace on the host
	// (connect = "ssh+netns:NAME", testbed hosts); "" = the host itself.
	Netns string           `json:"netns,omitempty"`
	Steps []drivers.Change `json:"steps,omitempty"`
	Token string           `json:"token,omitempty"`
	// SaveTo: after a successful apply, save the desired state (this
	// request as a stepless apply) in this directory as <host>.json, for
	// `fabctl agent --reapply DIR` at boot.
	SaveTo string `json:"save_to,omitempty"`
	// Traffic is the request of OpTraffic.
	Traffic json.RawMessage `json:"traffic,omitempty"`
	// Build is the controller's build identity (Handshake.Build). An agent
	// of another build refuses the request (KindBuild) before doing
	// anything, so the controller can run the agent without a separate
	// version check first and ship its binary only when refused. (An
	// agent from before this field refuses it as an unknown field.)
	Build string `json:"build,omitempty"`
	// Fingerprint (OpApply with Steps): apply only if the live state's
	// fingerprint (intent.State.Fingerprint) is this one, the plan's;
	// otherwise nothing is applied and the error is KindStale, with the
	// live fingerprint in the response's Fingerprint.
	Fingerprint string `json:"fingerprint,omitempty"`
	// ReadBack (OpApply with Steps): after the transaction, read the host
	// back and return that state in the response's State, for the
	// controller to verify (one agent run instead of a second one).
	ReadBack bool `json:"read_back,omitempty"`
}

// SavedName is the file in Request.SaveTo a host's desired state is
// saved in.
func SavedName(host string) string { return host + ".json" }

// ErrKind classifies an agent error.
type ErrKind string

// Error kinds.
const (
	KindRequest     ErrKind = "request"     // the request is malformed or incomplete
	KindProtocol    ErrKind = "protocol"    // the request's protocol version is not this agent's
	KindRead        ErrKind = "read"        // reading the live state failed
	KindApply       ErrKind = "apply"       // the transaction failed; the host was restored
	KindPartial     ErrKind = "partial"     // the transaction failed and the host could NOT be restored
	KindVerify      ErrKind = "verify"      // applied, but the read-back differs (re-apply mode)
	KindRollback    ErrKind = "rollback"    // the rollback failed
	KindInterrupted ErrKind = "interrupted" // the agent was stopped
	KindStale       ErrKind = "stale"       // the live state is not the plan's (Fingerprint): nothing applied
	KindBuild       ErrKind = "build"       // the agent is another build than the controller (Build): nothing done
)

// Error is one error of a response.
type Error struct {
	Kind    ErrKind `json:"kind"`
	Message string  `json:"message"`
}

func (e Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Response is what the agent writes on stdout.
type Response struct {
	Protocol int       `json:"protocol"`
	Agent    Handshake `json:"agent"`
	Op       Op        `json:"op"`
	Host     string    `json:"host,omitempty"`
	OK       bool      `json:"ok"`
	// State is the live state (read; apply in re-apply mode, or with
	// ReadBack: after it).
	State intent.State `json:"state,omitempty"`
	// Fingerprint is the live state's fingerprint an apply with
	// Fingerprint found (KindStale: not the plan's).
	Fingerprint string `json:"fingerprint,omitempty"`
	// Unsupported: what Read found the host cannot do, per NIC path
	// prefix, with the reason (the host driver's Limiter input).
	Unsupported map[string]string `json:"unsupported,omitempty"`
	// Facts: what Read learned of the NICs' kernel drivers that the
	// change list depends on ("nic/<n>/family" = "bnxt", the ETS layout
	// for that driver, why an ETS or APP change interrupts traffic there),
	// for the controller's Changes.
	Facts map[string]string `json:"facts,omitempty"`
	// Findings: what Read observed and the spec cannot change (NUMA,
	// PCIe link, device limits, DCBX owner), for the controller's plan.
	Findings []drivers.Finding `json:"findings,omitempty"`
	// Plan is the device plan (plan; apply in re-apply mode), a
	// plan.DevicePlan as JSON (package agent encodes and decodes it).
	Plan json.RawMessage `json:"plan,omitempty"`
	// Token identifies the transaction for rollback (apply).
	Token string `json:"token,omitempty"`
	// Result is the verified outcome (apply in re-apply mode), an
	// apply.DeviceResult as JSON (package agent encodes and decodes it).
	Result json.RawMessage `json:"result,omitempty"`
	// Traffic is the result of OpTraffic.
	Traffic json.RawMessage `json:"traffic,omitempty"`
	// Links is the result of OpLinks, a linktruth.DeviceLinks as JSON:
	// the controller decodes and checks it with DecodeLinks.
	Links    json.RawMessage `json:"links,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
	Errors   []Error         `json:"errors,omitempty"`
}

// Err returns the response's errors as one error, nil when OK.
func (r *Response) Err() error {
	if r.OK {
		return nil
	}
	if len(r.Errors) == 0 {
		return errors.New("the agent reported a failure without an error")
	}
	errs := make([]error, len(r.Errors))
	for i, e := range r.Errors {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// unknownOp starts the message of Check's refusal of an op it does not
// know; every agent of protocol 1 answers it so (KindRequest), those
// before OpLinks too.
const unknownOp = "unknown op "

// UnknownOp reports whether the agent refused op because it does not
// know it: an agent older than the op (same protocol, fewer ops). It did
// nothing.
func (r *Response) UnknownOp(op Op) bool {
	return !r.OK && len(r.Errors) > 0 && r.Errors[0].Kind == KindRequest &&
		strings.HasPrefix(r.Errors[0].Message, fmt.Sprintf("%s%q", unknownOp, op))
}

// Kind is the kind of the response's first error ("" when OK).
func (r *Response) Kind() ErrKind {
	if len(r.Errors) == 0 {
		return ""
	}
	return r.Errors[0].Kind
}

// Handshake identifies an agent binary: `fabctl agent --version-check`.
type Handshake struct {
	Agent    string `json:"agent"` // always "fabctl"
	Protocol int    `json:"protocol"`
	// Build identifies the binary's content (Identity); equal builds
	// speak the same intent shape.
	Build   string `json:"build"`
	Version string `json:"version,omitempty"` // human version, informational
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

// Matches reports whether an agent can serve a controller of build
// identity build.
func (h Handshake) Matches(build string) bool {
	return h.Agent == "fabctl" && h.Protocol == Protocol && h.Build == build && build != ""
}

// DecodeRequest reads one request, with errors that say what is wrong.
func DecodeRequest(r io.Reader) (*Request, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxRequest+1))
	if err != nil {
		return nil, fmt.Errorf("reading the request: %w", err)
	}
	if len(b) > MaxRequest {
		return nil, fmt.Errorf("the request is larger than %d MiB", MaxRequest>>20)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("no request on stdin: fabctl agent reads a JSON request (see docs/agent.md); use --version-check or --reapply FILE otherwise")
	}
	var req Request
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("the request is not valid JSON for this agent: %s", jsonErr(b, err))
	}
	if dec.More() {
		return nil, errors.New("the request has trailing data after the JSON object")
	}
	return &req, nil
}

// jsonErr adds the byte offset to a syntax error.
func jsonErr(b []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
		return fmt.Sprintf("line %d: %v", line, err)
	}
	return err.Error()
}

// Check validates a decoded request.
func (r *Request) Check() *Error {
	if r.Protocol != Protocol {
		return &Error{Kind: KindProtocol, Message: fmt.Sprintf("request protocol %d, this agent speaks %d: controller and agent are different fabctl builds", r.Protocol, Protocol)}
	}
	switch r.Op {
	case OpRead, OpPlan, OpApply, OpRollback, OpTraffic, OpLinks:
	case "":
		return &Error{Kind: KindRequest, Message: `no "op" (want ` + opNames + `)`}
	default:
		return &Error{Kind: KindRequest, Message: fmt.Sprintf("%s%q (want %s)", unknownOp, r.Op, opNames)}
	}
	if r.Host == nil || r.Host.Name == "" {
		return &Error{Kind: KindRequest, Message: `no "host" intent (with a name)`}
	}
	if r.Op == OpTraffic && len(r.Traffic) == 0 {
		return &Error{Kind: KindRequest, Message: `traffic needs its "traffic" request`}
	}
	if (r.Fingerprint != "" || r.ReadBack) && (r.Op != OpApply || len(r.Steps) == 0) {
		return &Error{Kind: KindRequest, Message: `"fingerprint" and "read_back" go with an "apply" that has "steps"`}
	}
	if r.Op == OpRollback && r.Token == "" {
		return &Error{Kind: KindRequest, Message: `rollback needs the "token" apply returned`}
	}
	return nil
}

var self struct {
	once sync.Once
	id   string
	err  error
}

// Self is the handshake of the running binary.
func Self(version string) Handshake {
	self.once.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			self.err = err
			return
		}
		self.id, self.err = Identity(exe)
	})
	id := self.id
	if self.err != nil {
		id = "unknown: " + self.err.Error()
	}
	return Handshake{Agent: "fabctl", Protocol: Protocol, Build: id, Version: version, OS: runtime.GOOS, Arch: runtime.GOARCH}
}

// Identity is a short, content-derived identity of an executable: a hash
// of the Go build ID the go tool records in the ELF note
// .note.go.buildid (cheap to read, and it changes whenever the content
// does), or of the whole file when there is no such note. Version
// strings are not enough: two dev builds both say "dev".
func Identity(path string) (string, error) {
	sum := sha256.New()
	if id, err := goBuildID(path); err == nil {
		sum.Write([]byte("go-buildid:" + id))
	} else {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := io.Copy(sum, f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(sum.Sum(nil))[:16], nil
}

// goBuildID reads the Go build ID note: namesz, descsz, type (4 each,
// little endian on the ELF targets fabctl ships for), the name "Go\0\0",
// then descsz bytes of ID.
func goBuildID(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return "", errors.New("no .note.go.buildid")
	}
	b, err := sec.Data()
	if err != nil {
		return "", err
	}
	if len(b) < 16 {
		return "", errors.New("short build id note")
	}
	bo := f.ByteOrder
	if bo == nil {
		bo = binary.LittleEndian
	}
	namesz, descsz := bo.Uint32(b[0:4]), bo.Uint32(b[4:8])
	if namesz != 4 || string(b[12:16]) != "Go\x00\x00" || uint64(16)+uint64(descsz) > uint64(len(b)) {
		return "", errors.New("malformed build id note")
	}
	return string(b[16 : 16+descsz]), nil
}

// Machine is the `uname -m` name of an executable's architecture, to say
// before copying whether it can run on a host.
func Machine(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	switch f.Machine {
	case elf.EM_X86_64:
		return "x86_64", nil
	case elf.EM_AARCH64:
		return "aarch64", nil
	case elf.EM_PPC64:
		if f.ByteOrder == binary.LittleEndian {
			return "ppc64le", nil
		}
		return "ppc64", nil
	case elf.EM_S390:
		return "s390x", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	}
	return f.Machine.String(), nil
}
