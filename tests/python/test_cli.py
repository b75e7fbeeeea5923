"""The package's wheel carries the `skiff` command line beside the interpreter,
as vLLM's carries `vllm`: installed, it runs a model."""
import shutil
import subprocess
import sysconfig


def test_the_wheel_installs_the_skiff_cli(stories_path):
    cli = shutil.which("skiff", path=sysconfig.get_path("scripts"))
    assert cli, f"no skiff in {sysconfig.get_path('scripts')}"
    out = subprocess.run([cli, "run", "-m", stories_path, "-p", "Once upon a time", "-n", "8", "--temp", "0"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Once upon a time") and len(out.stdout) > len("Once upon a time"), out.stdout
