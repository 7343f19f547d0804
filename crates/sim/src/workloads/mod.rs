//! Workload sources: rt-app JSON files, and generators for hackbench and the paper 002
//! programs, selected by a spec string such as `hackbench:groups=10,ipc=pipe`.
