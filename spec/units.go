package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Bytes is a size in bytes. Decimal prefixes (KB, MB, GB) are powers of
// 1000, as switch vendors use them for ECN and buffer thresholds (Cumulus
// "150000 B" = 150KB); binary prefixes (KiB, MiB, GiB) are powers of 1024.
type Bytes int64

// BitRate is a link speed in bits per second.
type BitRate int64

// Length is a cable length in metres.
type Length float64

var byteUnits = map[string]float64{
	"b": 1, "byte": 1, "bytes": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30,
	"k": 1e3, "m": 1e6, "g": 1e9,
}

var rateUnits = map[string]float64{
	"":  0, // a bare number is refused below
	"k": 1e3, "kb": 1e3, "kbps": 1e3, "kbit": 1e3, "kbit/s": 1e3,
	"m": 1e6, "mb": 1e6, "mbps": 1e6, "mbit": 1e6, "mbit/s": 1e6,
	"g": 1e9, "gb": 1e9, "gbps": 1e9, "gbit": 1e9, "gbit/s": 1e9, "gbe": 1e9,
	"t": 1e12, "tb": 1e12, "tbps": 1e12, "tbit": 1e12, "tbit/s": 1e12,
}

var lengthUnits = map[string]float64{
	"m": 1, "cm": 0.01, "mm": 0.001, "km": 1000,
}

// splitNumber splits "150KB" into 150 and "kb".
func splitNumber(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i == 0 {
		return 0, "", fmt.Errorf("%q does not start with a number", s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, "", fmt.Errorf("%q is not a valid number", s[:i])
	}
	return v, strings.ToLower(strings.TrimSpace(s[i:])), nil
}

// ParseBytes parses a size such as "150KB", "1.5MB", "64MiB" or "9216".
func ParseBytes(s string) (Bytes, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		unit = "b"
	}
	m, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown size unit %q in %q: use B, KB, MB, GB (x1000) or KiB, MiB, GiB (x1024)", unit, s)
	}
	r := v * m
	if r > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Bytes(math.Round(r)), nil
}

// ParseBitRate parses a speed such as "400G", "100Gbps" or "25GbE".
func ParseBitRate(s string) (BitRate, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	m, ok := rateUnits[unit]
	if unit == "" {
		return 0, fmt.Errorf("speed %q needs a unit: e.g. \"400G\", \"100Gbps\", \"25G\"", s)
	}
	if !ok {
		return 0, fmt.Errorf("unknown speed unit %q in %q: use K, M, G or T (bits per second), e.g. \"400G\", \"100Gbps\"", unit, s)
	}
	r := v * m
	if r > 1e15 {
		return 0, fmt.Errorf("speed %q is too large", s)
	}
	return BitRate(math.Round(r)), nil
}

// ParseLength parses a cable length such as "3m", "150cm" or "1.5km".
func ParseLength(s string) (Length, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, err
	}
	m, ok := lengthUnits[unit]
	if unit == "" {
		return 0, fmt.Errorf("length %q needs a unit: m, cm, mm or km (e.g. \"3m\")", s)
	}
	if !ok {
		return 0, fmt.Errorf("unknown length unit %q in %q: use m, cm, mm or km (e.g. \"3m\")", unit, s)
	}
	r := v * m
	if r > 1e6 {
		return 0, fmt.Errorf("length %q is too large", s)
	}
	return Length(r), nil
}

// ParseDuration parses a duration such as "200ms", "1.5s" or "10us".
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if _, unit, err := splitNumber(s); err == nil && unit == "" {
		return 0, fmt.Errorf("duration %q needs a unit: ns, us, ms, s, m or h (e.g. \"200ms\")", s)
	}
	d, err := time.ParseDuration(strings.ReplaceAll(s, "µs", "us"))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: use a number and a unit, e.g. \"200ms\", \"10s\", \"5us\"", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return d, nil
}

// ParsePercent parses "90%" (or a bare number) into 90.
func ParsePercent(s string) (float64, error) {
	s = strings.TrimSpace(s)
	v, unit, err := splitNumber(strings.TrimSuffix(s, "%"))
	if err != nil {
		return 0, err
	}
	if unit != "" {
		return 0, fmt.Errorf("%q is not a percentage: write e.g. \"90%%\"", s)
	}
	return v, nil
}

// String renders bytes with the largest decimal unit that keeps it exact
// to three decimals.
func (b Bytes) String() string {
	switch {
	case b >= 1e9 && b%1e6 == 0:
		return trimFloat(float64(b)/1e9) + "GB"
	case b >= 1e6 && b%1e3 == 0:
		return trimFloat(float64(b)/1e6) + "MB"
	case b >= 1e3:
		return trimFloat(float64(b)/1e3) + "KB"
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}

func (r BitRate) String() string {
	switch {
	case r >= 1e12:
		return trimFloat(float64(r)/1e12) + "T"
	case r >= 1e9:
		return trimFloat(float64(r)/1e9) + "G"
	case r >= 1e6:
		return trimFloat(float64(r)/1e6) + "M"
	case r >= 1e3:
		return trimFloat(float64(r)/1e3) + "K"
	}
	return strconv.FormatInt(int64(r), 10) + "bps"
}

func (l Length) String() string { return trimFloat(float64(l)) + "m" }

func trimFloat(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)
}

// ParseIntRanges parses "24-31" or "26" into the listed integers, each
// within [lo, hi].
func ParseIntRanges(s string, lo, hi int) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("empty element in %q", s)
		}
		a, b, isRange := strings.Cut(part, "-")
		from, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil {
			return nil, fmt.Errorf("%q is not a number or a range like \"24-31\"", part)
		}
		to := from
		if isRange {
			to, err = strconv.Atoi(strings.TrimSpace(b))
			if err != nil {
				return nil, fmt.Errorf("%q is not a range like \"24-31\"", part)
			}
		}
		if from > to {
			return nil, fmt.Errorf("range %q runs backwards", part)
		}
		if from < lo || to > hi {
			return nil, fmt.Errorf("%q is outside %d..%d", part, lo, hi)
		}
		for v := from; v <= to; v++ {
			out = append(out, v)
		}
	}
	return out, nil
}
