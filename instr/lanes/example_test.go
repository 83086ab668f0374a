package lanes_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/percause/percause/instr/lanes"
)

func Example() {
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "alive")
	}))
	defer engine.Close()

	c, err := lanes.New(lanes.WithTimeScale(1))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	req, _ := http.NewRequest(http.MethodGet, engine.URL+"/api/turn/progress", nil)
	body, _, err := c.Fetch(req, lanes.KindCheck, 1<<10) // control lane, 5 s
	fmt.Println(string(body), err, c.Resets(), c.RepliesInFlight("control"))
	// Output: alive <nil> 0 0
}
