#!/bin/sh
echo "ok 1 - placeholder"
