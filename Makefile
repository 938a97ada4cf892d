# ribbit: `make run` and `make test` set up what is missing on Debian 12 and do the job.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

PREFIX ?= /usr/local
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Build, run and test dependencies (Debian package names): the libraries, a JACK server and its
# example clients (jack_lsp, jack_iodelay ...), espeak-ng and sox for the demo speech, bc for the
# bench, ImageMagick to make the tests' photo-like QR pictures.
APT_PACKAGES := pkg-config libfftw3-dev libsndfile1-dev libjack-jackd2-dev libpng-dev libturbojpeg0-dev \
	libzbar-dev libqrencode-dev libsqlite3-dev jackd2 espeak-ng sox bc imagemagick tmux librsvg2-bin
DEMO := demo
DEMO_RX := Prescriptions/mild-presbycusis.rx

.PHONY: run test deps build bench demo man install uninstall clean fuzz codes rt-check format lint

# The main job: the hearing aid on live sound (starts a JACK server when none runs).
run: deps build
	scripts/run-live.sh

# Debug build for the unit tests; the compiler's real-time check; the release daemon and its
# audio process for the integration tests (what ships, and what the real-time audit must judge).
# The formatting check runs first: it takes seconds, the build minutes.
test: deps lint
	swift build
	$(MAKE) rt-check
	$(RELEASE) --product ribbitd
	$(RELEASE) --product ribbit-audio
	swift test --disable-xctest

# swift-format (ships with the toolchain), configured in .swift-format to the code's style:
# `make format` rewrites the files in place, `make lint` fails on any file it would change.
FORMAT_PATHS := Sources Tests bench fuzz
format:
	swift format format --in-place --recursive --parallel $(FORMAT_PATHS)

lint:
	@swift format lint --strict --recursive --parallel $(FORMAT_PATHS) || { echo "error: the code is not formatted as .swift-format says; run make format" >&2; exit 1; }

deps:
	@command -v swift >/dev/null || { echo "error: swift not found; install Swift 6 from swift.org and put it on PATH" >&2; exit 69; }
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# The Swift runtime is linked statically: the installed binary runs on machines without a
# Swift toolchain, and starts with about 6 MiB less resident memory (no dynamic relocation of
# the Swift libraries).
RELEASE := swift build -c release --static-swift-stdlib

build:
	$(RELEASE) --product ribbitd
	$(RELEASE) --product ribbit-audio

# The demo: synthetic speech at a microphone-like level through a sample prescription, with its
# debug dump, then the measured response against the prescription (fails beyond 2 dB).
demo: deps build
	@mkdir -p $(DEMO)
	espeak-ng -s 150 -w $(DEMO)/raw.wav "The quick brown fox jumps over the lazy dog. She sells sea shells by the sea shore. Six thick thistle sticks."
	sox -q $(DEMO)/raw.wav -r 48000 -c 2 -b 16 $(DEMO)/speech.wav gain -n -26
	.build/release/ribbitd rx show $(DEMO_RX)
	@echo
	.build/release/ribbitd process $(DEMO)/speech.wav $(DEMO)/speech-processed.wav --rx $(DEMO_RX) --dump $(DEMO)/dump
	@echo
	.build/release/ribbitd measure $(DEMO)/speech.wav $(DEMO)/speech-processed.wav --rx $(DEMO_RX) --tolerance 2
	@echo
	@echo "Listen: $(DEMO)/speech.wav (as spoken) and $(DEMO)/speech-processed.wav (as the hearing aid plays it)."
	@echo "Look: $(DEMO)/dump/dump.svg (spectra, gains, audiogram; docs/dump-format.md)."

# The compiler's real-time check: every function marked `@_noLocks` under RIBBIT_RT_AUDIT (the
# audio thread's; Sources/RibbitRealtime/RealtimeRules.swift) is proven in an optimised build to
# take no lock, allocate nothing and do no reference counting, down to what it calls. Release
# only (the attribute miscompiles in debug builds on Swift 6.3.1), in its own scratch directory
# so the shipped build is not rebuilt.
rt-check:
	swift build -c release --scratch-path .build/rt-check -Xswiftc -DRIBBIT_RT_AUDIT --target RibbitJack

# Engine speed against bare FFTW, then the daemon under JACK: latency, load, xruns, memory.
bench: deps build
	$(RELEASE) --product ribbit-bench
	$(RELEASE) --product ribbit-probe
	.build/release/ribbit-bench
	bench/jack-bench.sh

# libFuzzer on the prescription parser and the image path, FUZZ_SECONDS each (default 60),
# seeded with the sample prescriptions and their codes as PNG and JPEG (a mutated PNG nearly
# always fails a CRC before zbar sees a pixel; a mutated JPEG still decodes: fuzz/README.md).
# A crash leaves fuzz/crash-*; fix it and keep the input under Tests/*/FuzzFindings/.
FUZZ_SECONDS ?= 60
FUZZ_BUILD := swift build -c release -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library
fuzz: deps build
	cd fuzz && $(FUZZ_BUILD) --product fuzz-parser && $(FUZZ_BUILD) --product fuzz-image
	rm -rf fuzz/.build/corpus && mkdir -p fuzz/.build/corpus/parser fuzz/.build/corpus/image
	cp Prescriptions/*.rx fuzz/.build/corpus/parser/
	for rx in Prescriptions/*.rx; do png=fuzz/.build/corpus/image/$$(basename $$rx .rx).png; \
		.build/release/ribbitd rx make $$rx --scale 2 -o $$png >/dev/null && convert $$png -quality 75 $${png%.png}.jpg; done
	cd fuzz && SWIFT_BACKTRACE=enable=no .build/release/fuzz-parser -max_total_time=$(FUZZ_SECONDS) -max_len=4096 .build/corpus/parser
	cd fuzz && SWIFT_BACKTRACE=enable=no .build/release/fuzz-image -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 .build/corpus/image

# Prescriptions/*.png: each sample's QR code, made from its .rx source.
codes: build
	for rx in Prescriptions/*.rx; do .build/release/ribbitd rx make $$rx -o $${rx%.rx}.png; done

# The man page, generated from the built binary's command-line definitions by
# swift-argument-parser's generate-manual tool (built once, about 45 s, in its own scratch dir).
# Not `swift package generate-manual`: that plugin rebuilds every product without
# --static-swift-stdlib into .build/release, over the binary `install` copies.
MAN_TOOL := .build/man-tool/release/generate-manual
man: build
	swift build --package-path .build/checkouts/swift-argument-parser --scratch-path .build/man-tool -c release --product generate-manual
	mkdir -p .build/man
	$(MAN_TOOL) .build/release/ribbitd --output-directory .build/man

BINDIR = $(PREFIX)/bin
# ribbit-audio, the process `ribbitd run` starts for the JACK client, is not for users: libexec
# (ribbitd finds it in ../libexec/ribbit/ from its own directory).
LIBEXECDIR = $(PREFIX)/libexec/ribbit
install: build man
	@for binary in ribbitd ribbit-audio; do if ldd .build/release/$$binary | grep -q libswift; then \
		echo "error: .build/release/$$binary loads the Swift runtime from the toolchain, so installed it would not run without one; run make clean install" >&2; exit 1; fi; done
	install -Dm755 .build/release/ribbitd $(DESTDIR)$(BINDIR)/ribbitd
	install -Dm755 .build/release/ribbit-audio $(DESTDIR)$(LIBEXECDIR)/ribbit-audio
	install -Dm644 .build/man/ribbitd.1 $(DESTDIR)$(PREFIX)/share/man/man1/ribbitd.1
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/user
	sed 's|@BINDIR@|$(BINDIR)|' systemd/ribbitd.service > $(DESTDIR)$(PREFIX)/lib/systemd/user/ribbitd.service
	chmod 644 $(DESTDIR)$(PREFIX)/lib/systemd/user/ribbitd.service

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ribbitd $(DESTDIR)$(LIBEXECDIR)/ribbit-audio $(DESTDIR)$(PREFIX)/share/man/man1/ribbitd.1 $(DESTDIR)$(PREFIX)/lib/systemd/user/ribbitd.service

clean:
	rm -rf .build $(DEMO)
