from stress.cli import main

raise SystemExit(main())
