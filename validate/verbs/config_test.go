package verbs

import "testing"

// Fill gives what perftest gives when a flag is not passed
// (src/perftest_parameters.c init_perftest_params, ctx_set_max_inline;
// src/perftest_parameters.h DEF_SIZE_LAT, DEF_ITERS, DEF_ITERS_WB,
// DEF_INLINE_WRITE, DEF_INLINE_SEND_RC_UC).
func TestFillPerftestDefaults(t *testing.T) {
	for _, tc := range []struct {
		op     Op
		mode   Mode
		size   int
		iters  int
		inline int
	}{
		{OpWrite, ModeBandwidth, 65536, 5000, -1},
		{OpSend, ModeBandwidth, 65536, 1000, -1},
		{OpRead, ModeBandwidth, 65536, 1000, -1},
		{OpWrite, ModeLatency, 2, 1000, 220},
		{OpSend, ModeLatency, 2, 1000, 236},
		{OpRead, ModeLatency, 2, 1000, -1},
	} {
		x := Test{Op: tc.op, Mode: tc.mode}
		x.Fill()
		if x.Size != tc.size || x.Iterations != tc.iters || x.Inline != tc.inline {
			t.Errorf("%s %s: size %d iterations %d inline %d; perftest: %d, %d, %d",
				tc.op, tc.mode, x.Size, x.Iterations, x.Inline, tc.size, tc.iters, tc.inline)
		}
		if err := x.Check(); err != nil {
			t.Errorf("%s %s: %v", tc.op, tc.mode, err)
		}
	}
}
