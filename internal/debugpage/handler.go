package debugpage

import (
	_ "embed"
	"encoding/json"
	"net/http"
)

//go:embed index.html
var indexHTML []byte

// Handler serves the page, and the JSON document model returns when the
// query has format=json: the page fetches its own URL with it, so it
// works wherever it is mounted. model is called once per JSON request,
// concurrently if requests are.
func Handler(model func() Page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Query().Get("format") != "json" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(indexHTML)
			return
		}
		p := model()
		if p.Clients == nil {
			p.Clients = []Client{}
		}
		if p.Summary == nil {
			p.Summary = []Field{}
		}
		for i := range p.Clients {
			if p.Clients[i].Events == nil {
				p.Clients[i].Events = []Event{}
			}
		}
		b, err := json.Marshal(p)
		if err != nil { // NaN or Inf slipped in: a bug, said plainly
			http.Error(w, "netclock debug: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
}
