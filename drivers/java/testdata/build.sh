#!/bin/sh
# Rebuilds Hello.class and hello.jar from Hello.java (needs a JDK: javac and
# jar, Debian's default-jdk-headless). The files are committed, so that
# the tests need only a JVM.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
javac --release 8 -nowarn -d "$tmp" Hello.java
cp "$tmp/Hello.class" Hello.class
jar --create --date=2026-01-01T00:00:00Z --file hello.jar --main-class Hello -C "$tmp" Hello.class
