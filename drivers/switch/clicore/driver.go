package clicore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// Core is the part of an SSH CLI switch driver every platform shares,
// embedded the way the gNMI drivers embed gnmicore.Core:
//
//	type Driver struct{ clicore.Core }
//
//	func New() drivers.Driver { return &Driver{clicore.Core{Facts: facts, P: grammar{}}} }
//
// Core implements drivers.Driver (Name, Capabilities and Fields from
// Facts; Read, Changes, Apply, Confirm and Rollback) and drivers.Saver
// over the platform's grammar P: its show commands and parsing, its
// native steps, its transaction, its save check and its rollback. The
// platform driver adds only what is its own (Unexpressible, Render,
// counters). Connections are dialled through drivers/transport/ssh with
// the target's credentials, SSH and the platform's scrapligo definition.
//
// One Core serves one run: it remembers each applied transaction's
// prior configuration for Rollback. It keeps nothing else between calls:
// what Changes or Unexpressible need to know about a device they read
// from drivers.Target.Live (the facts Read returned).
type Core struct {
	// SSH tunes connections (timeouts, known_hosts, secret lookup); the
	// scrapligo platform is always Facts.Scrapli.
	SSH sshtransport.Options
	// Facts are the platform's fixed values.
	Facts Facts
	// P is the platform's grammar.
	P Platform

	mu    sync.Mutex
	prior map[string]any // token -> what the platform restores from
}

// Facts are an SSH CLI platform's fixed values.
type Facts struct {
	// Name is the platform name (drivers.Driver.Name, the registry key).
	Name string
	// Scrapli is the scrapligo v1.4 platform the sessions use: a built-in
	// name ("arista_eos") or a YAML definition ([]byte).
	Scrapli any
	// Capabilities are the transaction mechanisms the platform uses.
	Capabilities drivers.Capabilities
	// Fields are the diff tolerances and disruptive notes per state path.
	Fields []intent.Field
	// SaveCommand persists the running configuration; SaveStep names it
	// in errors.
	SaveCommand, SaveStep string
	// Refused returns the NOS's refusal in a command's output ("": none),
	// for refusals the scrapligo platform's failed-when-contains misses.
	// Nil: none.
	Refused func(out string) string
	// PriorKind names what Rollback restores from ("config",
	// "revision"): Rollback of a transaction this run did not record
	// fails. "": the platform rolls back without it.
	PriorKind string
	// RedialOnCancel: Apply's failure path also reconnects when the
	// context was cancelled, with a context that is not.
	RedialOnCancel bool
	// NoCheck says why the platform has no non-committing check (a
	// Platform without DeviceChecker); "": a generic reason.
	NoCheck string
}

// Platform is an SSH CLI platform's grammar: what Core runs on a session.
type Platform interface {
	// Read runs the platform's show commands and returns the managed
	// settings, with the device facts the other hooks need
	// (drivers.PathFacts), and whether the startup configuration holds
	// them (Core adds drivers.PathSaved).
	Read(s *Session, sw *intent.Switch) (st intent.State, saved bool, err error)
	// Steps turns a diff into native steps; t.Live is the state the
	// planner read (nil when it has not read the device).
	Steps(t drivers.Target, sw *intent.Switch, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error)
	// CheckSave checks that the save took, given what it printed.
	CheckSave(s *Session, out string) error
	// Transaction prepares one apply (nil: nothing to send).
	Transaction(t drivers.Target, steps []drivers.Change, opts drivers.ApplyOptions) (Transaction, error)
	// Rollback undoes a finished apply on s; pre is the recorded prior
	// configuration (ok false when this run recorded none).
	Rollback(s *Session, r drivers.Result, pre any, ok bool) error
}

// Confirmer is a Platform with commit-confirm: Confirm makes a pending
// commit permanent.
type Confirmer interface {
	Confirm(s *Session, r drivers.Result) error
}

// Transaction is one apply's platform side. Core.Apply runs Begin, Open,
// the Lines, Check, Commit and Verify in that order on one session. An
// error a phase returns through Failed makes Core reconnect if the
// connection was lost and hand over to Recover; any other error is
// returned as it is. Tx gives the phases a platform has no use for.
type Transaction interface {
	// Begin runs before anything changes (record the rollback point,
	// take a checkpoint); skip: nothing to apply.
	Begin(s *Session) (skip bool, err error)
	// Open starts the transaction (session, configure mode, patch file).
	Open(s *Session) error
	// Lines are sent one by one after Open; Where names line i of n.
	Lines() []string
	Where(i, n int, line string) string
	// Check runs after the lines; empty: nothing changed, the
	// transaction is discarded and Apply returns no token.
	Check(s *Session) (empty bool, err error)
	// Commit makes the change live; pending: a confirm timer runs.
	Commit(s *Session, opts drivers.ApplyOptions) (pending bool, err error)
	// Verify reads back after the commit.
	Verify(s *Session) error
	// Token names the transaction; Prior is what Rollback restores.
	Token() string
	Prior() any
	// Stranded is the error when reconnecting after a lost connection
	// failed (se: the failed step, err: the dial's error).
	Stranded(se *StepError, err error) error
	// Recover restores the prior state after the failed step se (lost:
	// the connection had dropped and s is a new one) and returns the
	// error Apply reports: a drivers.PartialError when restoring failed.
	Recover(s *Session, se *StepError, lost bool) error
}

// Tx is the part of a Transaction most platforms share; a platform's
// transaction embeds it (P: the type of its prior configuration) and
// sets ID and Pre in Begin. Its phases do nothing: the lines (Script) go
// out as they are, nothing is checked, committed or verified beyond them.
type Tx[P any] struct {
	// ID names the transaction (Token); Pre is what Rollback restores
	// from (Prior).
	ID  string
	Pre P
	// Script are the lines Core sends.
	Script []string
}

func (x *Tx[P]) Open(*Session) error   { return nil }
func (x *Tx[P]) Lines() []string       { return x.Script }
func (x *Tx[P]) Token() string         { return x.ID }
func (x *Tx[P]) Prior() any            { return x.Pre }
func (x *Tx[P]) Verify(*Session) error { return nil }

// Where names a line by its position.
func (x *Tx[P]) Where(i, n int, l string) string { return fmt.Sprintf("%s (line %d of %d)", l, i+1, n) }

func (x *Tx[P]) Check(*Session) (bool, error)                        { return false, nil }
func (x *Tx[P]) Commit(*Session, drivers.ApplyOptions) (bool, error) { return false, nil }

type failure struct {
	step  string
	cause error
}

func (f *failure) Error() string { return f.step + ": " + f.cause.Error() }

// Failed marks a transaction step's error for recovery (see Transaction).
func Failed(step string, cause error) error { return &failure{step, cause} }

// Session is one connection to the device during a Core call. Every
// command a platform runs goes through Send (or WriteFile), the one
// place that sends to the device.
type Session struct {
	Ctx    context.Context
	Target drivers.Target
	core   *Core
	conn   *sshtransport.Conn
}

// Device is the device's name.
func (s *Session) Device() string { return s.Target.Device.Name }

// Send runs a command, failing on the platform's refusal texts as well
// as the transport's.
func (s *Session) Send(cmd string) (string, error) {
	out, err := s.conn.Send(cmd)
	if err != nil || s.core.Facts.Refused == nil {
		return out, err
	}
	if r := s.core.Facts.Refused(out); r != "" {
		return out, &sshtransport.Error{Device: s.conn.Device(), Op: cmd, Kind: sshtransport.KindCommand, Detail: drivers.RedactSecretWords(r, "<redacted>")}
	}
	return out, nil
}

// WriteFile writes content to path on the device.
func (s *Session) WriteFile(path, content string) error { return s.conn.WriteFile(path, content) }

// Forget drops the prior configuration recorded for token.
func (s *Session) Forget(token string) { s.core.Forget(token) }

// Close closes the session's connection.
func (s *Session) Close() { s.conn.Close() }

// Dial opens a second session to the same device.
func (s *Session) Dial() (*Session, error) { return s.core.Dial(s.Ctx, s.Target) }

// options are the SSH options with the platform's scrapligo definition.
func (k *Core) options() sshtransport.Options {
	o := k.SSH
	o.Platform = k.Facts.Scrapli
	return o
}

// Dial opens a session to t.
func (k *Core) Dial(ctx context.Context, t drivers.Target) (*Session, error) {
	c, err := sshtransport.Dial(ctx, t, k.options())
	if err != nil {
		return nil, err
	}
	return &Session{Ctx: ctx, Target: t, core: k, conn: c}, nil
}

// redial replaces a lost connection.
func (s *Session) redial(ctx context.Context) error {
	s.conn.Close()
	c, err := sshtransport.Dial(ctx, s.Target, s.core.options())
	if err != nil {
		return err
	}
	s.conn = c
	return nil
}

// Name is the platform name.
func (k *Core) Name() string { return k.Facts.Name }

// Capabilities are the platform's transaction mechanisms.
func (k *Core) Capabilities() drivers.Capabilities { return k.Facts.Capabilities }

// Fields are the platform's diff tolerances and disruptive notes.
func (k *Core) Fields() []intent.Field { return slices.Clone(k.Facts.Fields) }

// Forget drops the prior configuration recorded for token.
func (k *Core) Forget(token string) {
	k.mu.Lock()
	delete(k.prior, token)
	k.mu.Unlock()
}

func (k *Core) remember(token string, pre any) {
	k.mu.Lock()
	if k.prior == nil {
		k.prior = map[string]any{}
	}
	k.prior[token] = pre
	k.mu.Unlock()
}

func (k *Core) recalled(token string) (any, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	pre, ok := k.prior[token]
	return pre, ok
}

// Read returns the platform's managed settings, its device facts and
// config/saved.
func (k *Core) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	sw, err := drivers.SwitchIntent(t, k.Facts.Name)
	if err != nil {
		return nil, err
	}
	s, err := k.Dial(ctx, t)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	st, saved, err := k.P.Read(s, sw)
	if err != nil {
		return nil, err
	}
	st[drivers.PathSaved] = strconv.FormatBool(saved)
	return st, nil
}

// Changes turns a diff into the platform's native steps.
func (k *Core) Changes(t drivers.Target, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error) {
	sw, err := drivers.SwitchIntent(t, k.Facts.Name)
	if err != nil {
		return nil, err
	}
	return k.P.Steps(t, sw, diff, desired)
}

// SaveSteps is the save as plans show it.
func (k *Core) SaveSteps() []string { return []string{k.Facts.SaveCommand} }

// Save runs the platform's save command and its check.
func (k *Core) Save(ctx context.Context, t drivers.Target) error {
	s, err := k.Dial(ctx, t)
	if err != nil {
		return err
	}
	defer s.Close()
	out, err := s.Send(k.Facts.SaveCommand)
	if err != nil {
		return &StepError{Device: t.Device.Name, Step: k.Facts.SaveStep, Err: err}
	}
	return k.P.CheckSave(s, out)
}

// Apply runs one transaction (see Transaction): on a failed step the
// platform restores the prior state, and the error is a
// drivers.PartialError only when that restore fails.
func (k *Core) Apply(ctx context.Context, t drivers.Target, steps []drivers.Change, opts drivers.ApplyOptions) (drivers.Result, error) {
	tx, err := k.P.Transaction(t, steps, opts)
	if err != nil || tx == nil {
		return drivers.Result{}, err
	}
	s, err := k.Dial(ctx, t)
	if err != nil {
		return drivers.Result{}, err
	}
	defer func() { s.Close() }()
	if skip, err := tx.Begin(s); err != nil || skip {
		return drivers.Result{}, err
	}
	fail := func(err error) (drivers.Result, error) {
		var f *failure
		if !errors.As(err, &f) {
			return drivers.Result{}, err
		}
		se := &StepError{Device: t.Device.Name, Step: f.step, Err: f.cause}
		lost, dctx := IsConnLoss(f.cause), ctx
		if k.Facts.RedialOnCancel {
			lost = lost || ctx.Err() != nil
			dctx = context.WithoutCancel(ctx)
		}
		if lost {
			if err := s.redial(dctx); err != nil {
				return drivers.Result{}, &drivers.PartialError{Device: t.Device.Name, Err: tx.Stranded(se, err)}
			}
		}
		return drivers.Result{}, tx.Recover(s, se, lost)
	}
	if err := tx.Open(s); err != nil {
		return fail(err)
	}
	lines := tx.Lines()
	for i, l := range lines {
		where := tx.Where(i, len(lines), l)
		if err := ctx.Err(); err != nil {
			return fail(Failed(where, err))
		}
		if _, err := s.Send(l); err != nil {
			return fail(Failed(where, err))
		}
	}
	empty, err := tx.Check(s)
	if err != nil {
		return fail(err)
	}
	if empty {
		return drivers.Result{}, nil
	}
	pending, err := tx.Commit(s, opts)
	if err != nil {
		return fail(err)
	}
	if err := tx.Verify(s); err != nil {
		return fail(err)
	}
	k.remember(tx.Token(), tx.Prior())
	return drivers.Result{Token: tx.Token(), Pending: pending}, nil
}

// Confirm makes a pending commit permanent (platforms with Confirmer;
// the others never leave one pending).
func (k *Core) Confirm(ctx context.Context, t drivers.Target, r drivers.Result) error {
	cf, ok := k.P.(Confirmer)
	if !ok || !r.Pending || r.Token == "" {
		return nil
	}
	s, err := k.Dial(ctx, t)
	if err != nil {
		return err
	}
	defer s.Close()
	return cf.Confirm(s, r)
}

// Rollback undoes a finished apply with the platform's hook.
func (k *Core) Rollback(ctx context.Context, t drivers.Target, r drivers.Result) error {
	if r.Token == "" {
		return nil
	}
	pre, ok := k.recalled(r.Token)
	if kind := k.Facts.PriorKind; !ok && kind != "" {
		return fmt.Errorf("%s: no prior %s recorded for transaction %s in this run", t.Device.Name, kind, r.Token)
	}
	s, err := k.Dial(ctx, t)
	if err != nil {
		return err
	}
	defer s.Close()
	return k.P.Rollback(s, r, pre, ok)
}

// VerifyPaths compares the settled paths of live with desired (within
// fields' tolerances) and describes every difference.
func VerifyPaths(paths []string, desired, live intent.State, fields []intent.Field) []string {
	want, have := intent.State{}, intent.State{}
	for _, p := range paths {
		if v, ok := desired[p]; ok {
			want[p] = v
		}
		if v, ok := live[p]; ok {
			have[p] = v
		}
	}
	var b []string
	for _, c := range intent.Diff(want, have, fields) {
		b = append(b, fmt.Sprintf("%s is %q, want %q", c.Path, c.Before, c.After))
	}
	for p, v := range have {
		if _, ok := want[p]; !ok {
			b = append(b, fmt.Sprintf("%s is still %q, want it gone", p, v))
		}
	}
	return b
}

// JoinLines is every step's payload in order.
func JoinLines(steps []drivers.Change) (lines, paths []string) {
	for _, s := range steps {
		lines = append(lines, s.Payload...)
		paths = append(paths, s.Paths...)
	}
	return lines, paths
}
