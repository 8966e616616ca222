package lint

import (
	"fmt"
	"testing"
)

func TestPrioSets(t *testing.T) {
	if got := prioSetMinus([]int{3, 4}, []int{4}); fmt.Sprint(got) != "[3]" {
		t.Errorf("prioSetMinus = %v", got)
	}
	if got := prioSetMinus([]int{3}, nil); fmt.Sprint(got) != "[3]" {
		t.Errorf("prioSetMinus against nothing = %v", got)
	}
	if !prioSetEqual([]int{3, 4}, []int{3, 4}) || prioSetEqual([]int{3}, []int{3, 4}) || prioSetEqual([]int{}, []int{3}) {
		t.Error("prioSetEqual is wrong")
	}
	if got := prioSetString(nil); got != "{}" {
		t.Errorf("prioSetString(nil) = %q", got)
	}
	if got := hclIntList([]int{3, 4}); got != "[3, 4]" {
		t.Errorf("hclIntList = %q", got)
	}
}
