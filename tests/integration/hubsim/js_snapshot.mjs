// Runs @huggingface/hub's snapshotDownload against a Hub (the simulator) and prints a JSON summary
// of the cache it wrote, so tests can compare it with the sources or with another client's cache.
//
// node js_snapshot.mjs --module-dir DIR --hub URL --repo ORG/NAME --revision REV --cache-dir DIR
//                      [--token hf_...] [--repo-type model|dataset|space]
// --module-dir: the folder holding node_modules/@huggingface/hub (npm_install.sh's folder).
// The token may also come from HF_TOKEN. Output (stdout, one JSON object):
// {"version", "commit", "snapshot", "refs": {name: commit},
//  "files": [{"path", "blob", "link", "size"}]   (sorted by path; link = the symlink's target as written)
//  "blobs": [names in blobs/]}
// Exit 1 with the error on stderr when the download fails.
import { createRequire } from "node:module";
import { readdir, readlink, readFile, lstat, stat } from "node:fs/promises";
import { join, relative, resolve, dirname, basename } from "node:path";

function parseArgs(argv) {
	const args = {};
	for (let i = 0; i < argv.length; i += 2) {
		if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
			throw new Error(`bad argument ${argv[i]}`);
		}
		args[argv[i].slice(2)] = argv[i + 1];
	}
	for (const required of ["module-dir", "hub", "repo", "revision", "cache-dir"]) {
		if (!args[required]) throw new Error(`missing --${required}`);
	}
	return args;
}

async function walk(dir, base = dir) {
	const out = [];
	for (const entry of await readdir(dir, { withFileTypes: true })) {
		const full = join(dir, entry.name);
		if (entry.isDirectory()) out.push(...(await walk(full, base)));
		else out.push(relative(base, full));
	}
	return out;
}

async function main() {
	const args = parseArgs(process.argv.slice(2));
	const require = createRequire(join(resolve(args["module-dir"]), "package.json"));
	const hub = require("@huggingface/hub");
	const moduleRoot = join(resolve(args["module-dir"]), "node_modules", "@huggingface", "hub");
	const version = JSON.parse(await readFile(join(moduleRoot, "package.json"), "utf8")).version;
	const type = args["repo-type"] ?? "model";
	const token = args.token ?? process.env.HF_TOKEN;

	// The library logs each download with console.debug; keep stdout for the JSON summary.
	console.debug = (...m) => console.error(...m);

	const snapshot = await hub.snapshotDownload({
		repo: { type, name: args.repo },
		revision: args.revision,
		hubUrl: args.hub,
		cacheDir: args["cache-dir"],
		...(token ? { accessToken: token } : {}),
	});

	const repoFolder = dirname(dirname(snapshot));
	const files = [];
	for (const path of (await walk(snapshot)).sort()) {
		const full = join(snapshot, path);
		const st = await lstat(full);
		const link = st.isSymbolicLink() ? await readlink(full) : null;
		files.push({
			path,
			link,
			blob: link ? basename(resolve(dirname(full), link)) : null,
			size: (await stat(full)).size,
		});
	}
	const refs = {};
	try {
		for (const name of await walk(join(repoFolder, "refs"))) {
			refs[name] = (await readFile(join(repoFolder, "refs", name), "utf8"));
		}
	} catch {
		// no refs/ when the revision was a commit
	}
	const summary = {
		version,
		commit: basename(snapshot),
		snapshot,
		refs,
		files,
		blobs: (await readdir(join(repoFolder, "blobs"))).sort(),
	};
	process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
}

main().catch((err) => {
	console.error(`js_snapshot.mjs: ${err?.stack ?? err}`);
	process.exit(1);
});
