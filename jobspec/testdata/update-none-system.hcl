# A system job without any update block gets the defaults too; system
# groups are not rescheduled.
job "none-system" {
  type = "system"
  group "a" {
    task "t" {
      driver = "mock"
    }
  }
}
