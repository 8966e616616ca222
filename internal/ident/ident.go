// Package ident holds the grammars of the identifiers fabctl passes from
// a spec to a device, a host path or a command line: Linux network
// device and RDMA device names, management addresses, user names,
// descriptions and plain names, and the check every line typed into a
// device's CLI must pass. A switch platform's port names are its own
// grammar (drivers.Platform's PortNaming); the rest are here, each with
// the source it follows. The spec loader refuses a value outside its
// grammar at the value's file:line; the drivers check again before a
// value reaches a device or a path (defence in depth).
//
// Every check is a byte loop, not a regular expression: the loader runs
// them over every NIC and port of a 16,384-host pod.
package ident

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// IFNAMSIZ is the kernel's interface name buffer, NUL included
// (include/uapi/linux/if.h).
const IFNAMSIZ = 16

// Netdev checks a Linux network device name. The kernel's rule is
// dev_valid_name (net/core/dev.c): not empty, shorter than IFNAMSIZ, not
// "." or "..", no '/', ':' or white space. fabctl narrows it to the
// characters udev and iproute2 names use (letters, digits, '-', '_', '.')
// so a name is also safe as a path component and a shell word.
func Netdev(name string) error {
	if name == "" {
		return errors.New("is empty")
	}
	if len(name) >= IFNAMSIZ {
		return fmt.Errorf("has %d characters; Linux interface names have at most %d (IFNAMSIZ)", len(name), IFNAMSIZ-1)
	}
	if name == "." || name == ".." {
		return errors.New("is not a usable interface name")
	}
	if err := word(name, "-_."); err != nil {
		return fmt.Errorf("%w; Linux interface names use letters, digits, '-', '_' and '.'", err)
	}
	return nil
}

// IBDeviceNameMax is the RDMA device name buffer, NUL included
// (IB_DEVICE_NAME_MAX, include/rdma/ib_verbs.h).
const IBDeviceNameMax = 64

// RDMADevice checks an RDMA device name (mlx5_0, rxe0, irdma0, bnxt_re0):
// a sysfs directory under /sys/class/infiniband, so no '/', "." or "..";
// at most IB_DEVICE_NAME_MAX-1 characters; letters, digits, '-', '_', '.'.
func RDMADevice(name string) error {
	if name == "" {
		return errors.New("is empty")
	}
	if len(name) >= IBDeviceNameMax {
		return fmt.Errorf("has %d characters; RDMA device names have at most %d (IB_DEVICE_NAME_MAX)", len(name), IBDeviceNameMax-1)
	}
	if name == "." || name == ".." {
		return errors.New("is not a usable device name")
	}
	if err := word(name, "-_."); err != nil {
		return fmt.Errorf("%w; RDMA device names use letters, digits, '-', '_' and '.'", err)
	}
	return nil
}

// Name checks a plain name (an ACL, a network namespace, a role): 1 to
// max letters, digits, '-', '_' or '.', not starting with '-' or '.'.
// A network namespace name is a file under /run/netns (iproute2
// ip/ipnetns.c), so '/' and "." and ".." are out.
func Name(s string, max int) error {
	if s == "" {
		return errors.New("is empty")
	}
	if len(s) > max {
		return fmt.Errorf("has %d characters, at most %d", len(s), max)
	}
	if err := word(s, "-_."); err != nil {
		return fmt.Errorf("%w; use letters, digits, '-', '_' and '.'", err)
	}
	return nil
}

// word checks s holds only ASCII letters, digits and the extra
// characters, and does not start with '-' or '.' (an option, a hidden
// or relative path).
func word(s, extra string) error {
	if s[0] == '-' || s[0] == '.' {
		return fmt.Errorf("starts with %q", s[0])
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0 {
			continue
		}
		return fmt.Errorf("holds %s", Quote(s[i:]))
	}
	return nil
}

// Quote names the first character of s for an error message, escaped
// when it is not printable.
func Quote(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsPrint(r) {
		return "the control character " + strconv.QuoteRune(r)
	}
	return strconv.QuoteRune(r)
}

// UserName checks a login name. POSIX's portable user names (Base
// Definitions 3.437 User Name, 3.282 Portable Filename Character Set) are
// letters, digits, '.', '_' and '-', not starting with '-'; '@' is added
// for directory users (user@domain). At most 64 characters.
func UserName(s string) error {
	if s == "" {
		return errors.New("is empty")
	}
	if len(s) > 64 {
		return fmt.Errorf("has %d characters, at most 64", len(s))
	}
	if s[0] == '-' {
		return errors.New("starts with '-'")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '@' {
			continue
		}
		return fmt.Errorf("holds %s; user names use letters, digits, '.', '_', '-' and '@' (POSIX portable user names)", Quote(s[i:]))
	}
	return nil
}

// Address checks a management address: an IP address or a host name
// (RFC 1123 2.1: labels of letters, digits and '-', not starting or
// ending with '-', at most 63 characters each, 253 in all), optionally
// followed by ":port" (1-65535); an IPv6 address with a port is written
// "[addr]:port".
func Address(s string) error {
	if s == "" {
		return errors.New("is empty")
	}
	host, port := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return errors.New("has '[' without ']'")
		}
		host, port = s[1:end], s[end+1:]
		if port != "" {
			if port[0] != ':' {
				return fmt.Errorf("has %q after ']'; write [address]:port", port)
			}
			port = port[1:]
			if port == "" {
				return errors.New("has an empty port")
			}
		}
		if _, err := netip.ParseAddr(host); err != nil || !strings.Contains(host, ":") {
			return fmt.Errorf("[%s] is not an IPv6 address", host)
		}
	case strings.Count(s, ":") == 1:
		host, port, _ = strings.Cut(s, ":")
		if port == "" {
			return errors.New("has an empty port")
		}
	case strings.Count(s, ":") > 1:
		if _, err := netip.ParseAddr(s); err != nil {
			return errors.New("is not an IPv6 address (write [address]:port for one with a port)")
		}
		return nil
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return fmt.Errorf("port %q is not a number from 1 to 65535", port)
		}
	}
	if strings.HasPrefix(s, "[") {
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	return HostName(host)
}

// HostName checks an RFC 1123 host name.
func HostName(s string) error {
	if s == "" {
		return errors.New("has an empty host")
	}
	if len(s) > 253 {
		return fmt.Errorf("has %d characters; a host name has at most 253", len(s))
	}
	rest := strings.TrimSuffix(s, ".")
	for more := true; more; {
		var label string
		label, rest, more = strings.Cut(rest, ".")
		if label == "" || more && rest == "" {
			return errors.New("has an empty label (\"..\")")
		}
		if len(label) > 63 {
			return fmt.Errorf("has a label of %d characters; at most 63", len(label))
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("label %q starts or ends with '-'", label)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
				continue
			}
			return fmt.Errorf("holds %s; a host name is letters, digits, '-' and '.' (RFC 1123), or give an IP address", Quote(label[i:]))
		}
	}
	return nil
}

// MaxDescription is the longest description fabctl takes (EOS and NX-OS
// interface descriptions take 240 and 254 characters; the shorter wins).
const MaxDescription = 240

// Description checks free text that may be written into a device's
// configuration: printable characters only (no control, format or
// bidirectional characters, no line break), none of the characters a
// switch CLI or a shell interprets (`?` is help on EOS and NX-OS, `!`
// and `#` start comments, `|` pipes, `$` NX-OS command-line variables,
// quotes, backslash, backquote, ';', '&', '<', '>', '{', '}', '*', '~'),
// at most MaxDescription characters.
func Description(s string) error {
	if n := utf8.RuneCountInString(s); n > MaxDescription {
		return fmt.Errorf("has %d characters, at most %d", n, MaxDescription)
	}
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			return errors.New("is not UTF-8")
		case r == ' ':
		case r < 0x80 && strings.ContainsRune(descriptionMeta, r):
			return fmt.Errorf("holds %q, which a switch CLI or a shell interprets; descriptions use letters, digits, spaces and - _ . , : / ( ) + = @ %%", r)
		case !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r):
			return fmt.Errorf("holds %s at byte %d; descriptions are printable text on one line", Quote(s[i:]), i)
		}
	}
	return nil
}

const descriptionMeta = "?!#|$\"'\\`;&<>{}*~[]^"

// Path checks a file path written into a host's or a subnet manager's
// configuration (nccl_env_file, opensm_conf): absolute, clean (no "."
// or ".." element, no "//"), printable, no white space and none of a
// shell's special characters.
func Path(p string) error {
	if p == "" {
		return errors.New("is empty")
	}
	if !strings.HasPrefix(p, "/") {
		return errors.New("is not an absolute path")
	}
	if len(p) > 4095 {
		return fmt.Errorf("has %d characters; PATH_MAX is 4096", len(p))
	}
	for _, el := range strings.Split(p[1:], "/") {
		if el == "" && p != "/" || el == "." || el == ".." {
			return errors.New(`is not a clean path (an empty, "." or ".." element)`)
		}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/-_.+@,:=", c) >= 0 {
			continue
		}
		return fmt.Errorf("holds %s; paths use letters, digits and / - _ . + @ , : =", Quote(p[i:]))
	}
	return nil
}

// Line checks one line fabctl is about to type into a device's CLI: no
// control character (a line break would run a second command; ESC, ^C,
// ^U and the like act on the line editor) and no DEL, C1 control or
// bidirectional formatting character. The SSH CLI transport refuses any
// other line.
func Line(s string) error {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			return fmt.Errorf("byte %d is not UTF-8", i)
		case r == '\n' || r == '\r':
			return fmt.Errorf("holds a line break at byte %d: it would run a second command", i)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Cf, r):
			return fmt.Errorf("holds the control character %s at byte %d", strconv.QuoteRune(r), i)
		}
		i += n
	}
	return nil
}

// Template reports the first place s would be read as a Go text/template
// action ("{{"), where a consumer such as gnmic renders a request file as
// a template before it parses it; -1 when there is none.
func Template(s string) int { return strings.Index(s, "{{") }

// Port checks the safe class every switch port name is in before its
// platform's own grammar (drivers.PortNaming.Pattern): a letter or
// digit, then up to 63 letters, digits, '_', '.', '/', ':' or '-'. No
// space, quote, line break or control character, none of a CLI's or a
// shell's metacharacters (`;`, `|`, `?`, `!`, `$`...), nothing a gNMI
// path key escapes (']', '\\', '=') and no "{{" for gnmic's template
// step. Switch drivers refuse an intent whose ports are outside it
// (drivers.SwitchIntent).
func Port(name string) error {
	if name == "" {
		return errors.New("is empty")
	}
	if len(name) > 64 {
		return fmt.Errorf("has %d characters, at most 64", len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if i > 0 && strings.IndexByte("_./:-", c) >= 0 {
			continue
		}
		if c == '\n' || c == '\r' {
			return fmt.Errorf("holds a line break at byte %d: it would run a second command", i)
		}
		return fmt.Errorf("holds %s: port names use letters, digits, '_', '.', '/', ':' and '-' (no spaces, CLI or shell metacharacters)", Quote(name[i:]))
	}
	return nil
}
