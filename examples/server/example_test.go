package main

import "fmt"

// The names the development certificate is made for: the loopback names,
// and the host of the listen address when a client can dial it.
func Example() {
	fmt.Println(devHosts("127.0.0.1:4433"))
	fmt.Println(devHosts("game.example:4433"))
	fmt.Println(devHosts("0.0.0.0:4433"))
	// Output:
	// [localhost 127.0.0.1 ::1]
	// [localhost 127.0.0.1 ::1 game.example]
	// [localhost 127.0.0.1 ::1]
}
