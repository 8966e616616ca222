package clicore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// Core is the part of an SSH CLI switch driver every platform shares:
// connections (dial through drivers/transport/ssh with the target's
// credentials and the driver's options, close), the Read, Changes, Save,
// Apply, Confirm and Rollback skeletons, and the per-run record of each
// applied transaction's prior configuration. A platform driver holds a
// Core (its zero value is ready) and passes its Platform hooks to each
// call; the hooks carry only the platform's facts: its show commands
// and parsing, startup compare, native steps, transaction commands,
// save check and refusal texts.
type Core struct {
	mu    sync.Mutex
	prior map[string]any // token -> what the platform restores from
}

// Facts are a platform's fixed values.
type Facts struct {
	// Name is the platform name (drivers.SwitchIntent's kind).
	Name string
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
}

// Platform is what one SSH CLI platform supplies to Core.
type Platform interface {
	Facts() Facts
	// Options are the SSH options with the platform's scrapligo
	// definition.
	Options() sshtransport.Options
	// Read runs the platform's show commands and parses the managed
	// settings; raw is what Saved compares with the startup config.
	Read(s *Session, sw *intent.Switch) (st intent.State, raw any, err error)
	// Saved reports whether the startup configuration holds raw.
	Saved(s *Session, raw any) (bool, error)
	// Steps turns a diff into native steps.
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
// returned as it is.
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

type failure struct {
	step  string
	cause error
}

func (f *failure) Error() string { return f.step + ": " + f.cause.Error() }

// Failed marks a transaction step's error for recovery (see Transaction).
func Failed(step string, cause error) error { return &failure{step, cause} }

// Session is one connection to the device during a Core call.
type Session struct {
	Ctx    context.Context
	Target drivers.Target
	core   *Core
	p      Platform
	conn   *sshtransport.Conn
}

// Conn is the session's current connection.
func (s *Session) Conn() *sshtransport.Conn { return s.conn }

// Device is the device's name.
func (s *Session) Device() string { return s.Target.Device.Name }

// Send runs a command, failing on the platform's refusal texts as well
// as the transport's.
func (s *Session) Send(cmd string) (string, error) { return Send(s.conn, s.p.Facts().Refused, cmd) }

// Forget drops the prior configuration recorded for token.
func (s *Session) Forget(token string) { s.core.Forget(token) }

// Send runs cmd on c and fails with a KindCommand error when refused
// finds a refusal in its output.
func Send(c *sshtransport.Conn, refused func(string) string, cmd string) (string, error) {
	out, err := c.Send(cmd)
	if err != nil || refused == nil {
		return out, err
	}
	if r := refused(out); r != "" {
		return out, &sshtransport.Error{Device: c.Device(), Op: cmd, Kind: sshtransport.KindCommand, Detail: drivers.RedactSecretWords(r, "<redacted>")}
	}
	return out, nil
}

// Dial opens a session to t with p's options.
func (k *Core) Dial(ctx context.Context, t drivers.Target, p Platform) (*Session, error) {
	c, err := sshtransport.Dial(ctx, t, p.Options())
	if err != nil {
		return nil, err
	}
	return &Session{Ctx: ctx, Target: t, core: k, p: p, conn: c}, nil
}

// Close closes the session's connection.
func (s *Session) Close() { s.conn.Close() }

// redial replaces a lost connection.
func (s *Session) redial(ctx context.Context) error {
	s.conn.Close()
	c, err := sshtransport.Dial(ctx, s.Target, s.p.Options())
	if err != nil {
		return err
	}
	s.conn = c
	return nil
}

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

// Read returns the platform's managed settings and config/saved.
func (k *Core) Read(ctx context.Context, t drivers.Target, p Platform) (intent.State, error) {
	sw, err := drivers.SwitchIntent(t, p.Facts().Name)
	if err != nil {
		return nil, err
	}
	s, err := k.Dial(ctx, t, p)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	st, raw, err := p.Read(s, sw)
	if err != nil {
		return nil, err
	}
	ok, err := p.Saved(s, raw)
	if err != nil {
		return nil, err
	}
	st[drivers.PathSaved] = strconv.FormatBool(ok)
	return st, nil
}

// Changes turns a diff into the platform's native steps.
func (k *Core) Changes(t drivers.Target, diff []intent.AttrChange, desired intent.State, p Platform) ([]drivers.Change, error) {
	sw, err := drivers.SwitchIntent(t, p.Facts().Name)
	if err != nil {
		return nil, err
	}
	return p.Steps(t, sw, diff, desired)
}

// SaveSteps is the save as plans show it.
func (k *Core) SaveSteps(p Platform) []string { return []string{p.Facts().SaveCommand} }

// Save runs the platform's save command and its check.
func (k *Core) Save(ctx context.Context, t drivers.Target, p Platform) error {
	s, err := k.Dial(ctx, t, p)
	if err != nil {
		return err
	}
	defer s.Close()
	f := p.Facts()
	out, err := s.Send(f.SaveCommand)
	if err != nil {
		return &StepError{Device: t.Device.Name, Step: f.SaveStep, Err: err}
	}
	return p.CheckSave(s, out)
}

// Apply runs one transaction (see Transaction): on a failed step the
// platform restores the prior state, and the error is a
// drivers.PartialError only when that restore fails.
func (k *Core) Apply(ctx context.Context, t drivers.Target, steps []drivers.Change, opts drivers.ApplyOptions, p Platform) (drivers.Result, error) {
	tx, err := p.Transaction(t, steps, opts)
	if err != nil || tx == nil {
		return drivers.Result{}, err
	}
	s, err := k.Dial(ctx, t, p)
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
		if p.Facts().RedialOnCancel {
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

// Confirm makes a pending commit permanent (platforms with Confirmer).
func (k *Core) Confirm(ctx context.Context, t drivers.Target, r drivers.Result, p Platform) error {
	cf, ok := p.(Confirmer)
	if !ok || !r.Pending || r.Token == "" {
		return nil
	}
	s, err := k.Dial(ctx, t, p)
	if err != nil {
		return err
	}
	defer s.Close()
	return cf.Confirm(s, r)
}

// Rollback undoes a finished apply with the platform's hook.
func (k *Core) Rollback(ctx context.Context, t drivers.Target, r drivers.Result, p Platform) error {
	if r.Token == "" {
		return nil
	}
	pre, ok := k.recalled(r.Token)
	if kind := p.Facts().PriorKind; !ok && kind != "" {
		return fmt.Errorf("%s: no prior %s recorded for transaction %s in this run", t.Device.Name, kind, r.Token)
	}
	s, err := k.Dial(ctx, t, p)
	if err != nil {
		return err
	}
	defer s.Close()
	return p.Rollback(s, r, pre, ok)
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

// Dial opens a second connection to the session's device.
func (s *Session) Dial() (*sshtransport.Conn, error) {
	return sshtransport.Dial(s.Ctx, s.Target, s.p.Options())
}
