package inputbuf_test

import (
	"errors"
	"fmt"

	"github.com/netclock/netclock/inputbuf"
)

// A server keeps one buffer for all clients: the network goroutine puts
// each stamped input, the tick callback takes the inputs of its tick.
func Example() {
	type move struct{ dx, dy int }
	buf, err := inputbuf.New[string, move](inputbuf.Config{Next: 100})
	if err != nil {
		panic(err)
	}
	// Inputs arrive stamped with the predicted tick they are for.
	buf.Put("alice", 101, move{1, 0})
	buf.Put("bob", 100, move{0, 1})
	if err := buf.Put("bob", 100, move{0, 2}); errors.Is(err, inputbuf.ErrDuplicate) {
		fmt.Println("duplicate dropped")
	}
	for tick := int64(100); tick <= 101; tick++ {
		for _, in := range buf.Take(tick) {
			fmt.Printf("tick %d: %s moves %+v\n", tick, in.Client, in.Input)
		}
	}
	// Tick 100 is simulated: bob's input for it is late now.
	if err := buf.Put("bob", 100, move{}); errors.Is(err, inputbuf.ErrLate) {
		fmt.Println(err)
	}
	st, _ := buf.Stats("bob")
	fmt.Printf("bob: %d early, %d late, %d duplicate, %d missing, last lead %d ticks\n",
		st.Early, st.Late, st.Duplicate, st.Missing, st.LastLead)
	// Output:
	// duplicate dropped
	// tick 100: bob moves {dx:0 dy:1}
	// tick 101: alice moves {dx:1 dy:0}
	// inputbuf: input arrived after its tick: client bob, tick 100, next tick 102
	// bob: 1 early, 1 late, 1 duplicate, 1 missing, last lead -2 ticks
}
