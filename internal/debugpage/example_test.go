package debugpage_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"

	"github.com/netclock/netclock/internal/debugpage"
)

// The page's data: its own URL with ?format=json.
func ExampleHandler() {
	h := debugpage.Handler(func() debugpage.Page {
		return debugpage.Page{Role: "server", TickRate: 60}
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/netclock/?format=json", nil))
	var p debugpage.Page
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		fmt.Println(err)
	}
	fmt.Println(rec.Header().Get("Content-Type"), p.Role, p.TickRate, len(p.Clients))
	// Output: application/json server 60 0
}
