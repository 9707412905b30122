package main

import (
	"fmt"
	"os"
	"time"

	"stratbench/job"
	"stratbench/prune"
)

func main() {
	s, err := job.OpenStore(os.Args[1])
	if err != nil {
		panic(err)
	}
	for i := 0; i < 5; i++ {
		t := time.Now()
		jobs, _, _ := s.JobFolders()
		d1 := time.Since(t)
		t = time.Now()
		prune.Retain(s, job.DefaultBudget(), "x")
		fmt.Println(len(jobs), d1, time.Since(t))
	}
}
