package sshtransport

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/scrapli/scrapligo/channel"
	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/util"

	"github.com/fabctl/fabctl/internal/ident"
)

// LineError is a line the transport refused to type: it holds a line
// break or a control character (ident.Line). Nothing was sent.
type LineError struct {
	Line string
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("refused to send %s: it %v (nothing was sent)", strconv.Quote(e.Line), e.Err)
}

// One command is one round trip: the command and its return go to the
// device in one write, and one read loop collects the echo, the output
// and the next prompt, the way an operator's paste of a line works and
// as Netmiko's send_command and Ansible's network_cli send a command.
// scrapligo v1.4's SendCommand writes the command, waits until the
// device has echoed it, then writes the return and waits for the
// prompt: two round trips, two SSH packets each way, and two polling
// waits of the channel's read delay per command. A plan of 64 switches
// sends 3 to 7 commands per switch (1 to 5 of them when the session
// opens), so that doubled the packets, syscalls and wake-ups of every
// read. Everything else stays scrapligo's: the privilege levels and
// their escalation (enable, with its password), the prompt patterns,
// failed-when-contains, ANSI stripping and the session log.

// command runs cmd at the platform's default privilege level and
// returns its output without the echo and the final prompt, and the
// failed-when-contains text it holds ("" none).
//
// This is the one function every command typed into a CLI session goes
// through (Conn.Send, the on-open commands): a line holding a line break
// would run a second command, a control character would act on the
// device's line editor, so such a line is refused here and nothing is
// written (ident.Line). The spec loader refuses the identifiers that
// could carry one; this is the last check before the device.
func command(d *network.Driver, cmd string, timeout time.Duration) (string, string, error) {
	if err := ident.Line(cmd); err != nil {
		return "", "", &LineError{Line: cmd, Err: err}
	}
	if d.CurrentPriv != d.DefaultDesiredPriv {
		// As scrapligo's network SendCommand does.
		if err := d.AcquirePriv(d.DefaultDesiredPriv); err != nil {
			return "", "", err
		}
	}
	d.Logger.Infof("SendCommand requested, sending '%s'", cmd)
	ch := d.Channel
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	in := make([]byte, 0, len(cmd)+len(ch.ReturnChar))
	in = append(append(in, cmd...), ch.ReturnChar...)
	if err := ch.Write(in, false); err != nil {
		return "", "", err
	}
	b, err := readCommand(ctx, ch, []byte(cmd))
	if err != nil {
		if ctx.Err() != nil {
			return "", "", fmt.Errorf("%w: %v", util.ErrTimeoutError, ctx.Err())
		}
		return "", "", err
	}
	out := string(commandOutput(b, ch.PromptPattern))
	return out, util.StringContainsAnySubStrs(out, d.FailedWhenContains), nil
}

// readCommand reads what the device sends after a command until the
// prompt that follows the command's echo, and returns it from the line
// after the echo. What came before the echo (a prompt the device printed
// twice after login, an earlier command's late output) is dropped, as
// scrapligo's wait for the echo drops it. The echo is found as
// scrapligo finds it: cmd's characters in order (a device may insert
// line-wrap characters), up to the end of that line. The prompt is
// matched in the last line read, the line a device prints last before
// it waits for input, not in every line of the last 1,000 bytes as
// scrapligo's ReadUntilPrompt matches it after each read (that
// multi-line regexp over a command's output was 3% of a 64-switch
// plan's CPU); an output line that merely looks like a prompt no longer
// ends the read early either. The channel is polled every ReadDelay as
// scrapligo's own reads poll it.
func readCommand(ctx context.Context, ch *channel.Channel, cmd []byte) ([]byte, error) {
	var rb []byte
	start := -1 // index of the line after the echo
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		default:
		}
		nb, err := ch.Read()
		if err != nil {
			return nil, err
		}
		if nb == nil {
			time.Sleep(ch.ReadDelay)
			continue
		}
		rb = append(rb, nb...)
		if start < 0 {
			end := echoEnd(rb, cmd)
			if end < 0 {
				continue
			}
			nl := bytes.IndexByte(rb[end:], '\n')
			if nl < 0 {
				continue
			}
			start = end + nl + 1
		}
		out := rb[start:]
		if ch.PromptPattern.Match(out[bytes.LastIndexByte(out, '\n')+1:]) {
			return out, nil
		}
	}
}

// commandOutput is what a command printed: b (the lines after the
// command's echo up to the prompt, carriage returns already removed by
// the channel) without the final prompt line and the blank lines around
// the output, each line without trailing spaces (as scrapligo's
// SendCommand returns it).
func commandOutput(b []byte, prompt *regexp.Regexp) []byte {
	// The final prompt: the last line, which the read stopped at.
	if last := bytes.LastIndexByte(b, '\n') + 1; prompt.Match(b[last:]) {
		b = b[:last]
	}
	b = trimLineEnds(b)
	return bytes.Trim(b, "\n")
}

// echoEnd is the index just after the last character of cmd when every
// character of cmd occurs in b in order; -1 when they do not (0 for an
// empty cmd).
func echoEnd(b, cmd []byte) int {
	if len(cmd) == 0 {
		return 0
	}
	if i := bytes.Index(b, cmd); i >= 0 {
		return i + len(cmd)
	}
	j := 0
	for i, c := range b {
		if c == cmd[j] {
			j++
			if j == len(cmd) {
				return i + 1
			}
		}
	}
	return -1
}

// trimLineEnds drops the spaces at the end of each line; b is returned
// as it is (no copy) when no line has any.
func trimLineEnds(b []byte) []byte {
	if !bytes.Contains(b, []byte(" \n")) && !bytes.HasSuffix(b, []byte(" ")) {
		return b
	}
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}

// onOpen runs the platform's network-on-open operations as scrapligo's
// does (acquire-priv, channel writes), except that its commands
// (terminal length 0, terminal width) are sent with command: one round
// trip each.
func onOpen(ops []map[string]any, timeout time.Duration) func(*network.Driver) error {
	return func(d *network.Driver) error {
		for _, op := range ops {
			var err error
			switch op["operation"] {
			case "acquire-priv":
				target := d.DefaultDesiredPriv
				if t, ok := op["target"].(string); ok {
					target = t
				}
				err = d.AcquirePriv(target)
			case "driver.send-command":
				cmd, ok := op["command"].(string)
				if !ok {
					return fmt.Errorf("%w: network-on-open command is not a string", util.ErrBadOption)
				}
				var failed string
				if _, failed, err = command(d, cmd, timeout); err == nil && failed != "" {
					err = fmt.Errorf("%q failed: %s", cmd, failed)
				}
			default:
				err = writeOp(d.Channel, op)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// onClose ends the session without waiting for the device: the
// platform's network-on-close writes (`exit` and its return) go out as
// one write, and its acquire-priv (a round trip to read the prompt, and
// `end` from configuration mode) is left out: the connection is closed
// right after, which ends the device's session in whatever mode it is,
// as an `end` before `exit` would (a transaction the driver left open
// has been committed or aborted by then, or is recovered from on the
// next connection as after any lost connection).
func onClose(ops []map[string]any) func(*network.Driver) error {
	return func(d *network.Driver) error {
		var buf []byte
		for _, op := range ops {
			switch op["operation"] {
			case "channel.write":
				in, _ := op["input"].(string)
				buf = append(buf, in...)
			case "channel.return":
				buf = append(buf, d.Channel.ReturnChar...)
			}
		}
		if len(buf) == 0 {
			return nil
		}
		return d.Channel.Write(buf, false)
	}
}

// writeOp is a channel.write or channel.return operation.
func writeOp(ch *channel.Channel, op map[string]any) error {
	switch op["operation"] {
	case "channel.write":
		in, ok := op["input"].(string)
		if !ok {
			return fmt.Errorf("%w: channel.write input is not a string", util.ErrBadOption)
		}
		red, _ := op["redacted"].(bool)
		return ch.Write([]byte(in), red)
	case "channel.return":
		return ch.WriteReturn()
	}
	return fmt.Errorf("%w: unknown operation %v", util.ErrBadOption, op["operation"])
}
